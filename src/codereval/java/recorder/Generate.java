package codereval.recorder;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Calls for the methods no test of the suite reaches, from generated inputs: for each target,
 * arguments drawn from small pools by parameter type (numbers around zero, short texts, small
 * arrays and collections, an enum's constants, null), a receiver from a no-argument
 * constructor for an instance method. Each call is run on the project as built and written
 * exactly as the recorder writes a recorded one (same file format, same XStream XML), so the
 * rest of {@code build java-tests} treats them alike: replayed three times, checked by mutants.
 *
 * <p>Usage: Generate CONFIG (the recorder's configuration). At most a quarter of a method's
 * calls may end in an exception (most inputs a type allows are not ones its author meant); a
 * call that runs past a second ends the method's generation.
 */
public final class Generate {
    private Generate() {}

    private static final int ATTEMPTS = 400;
    private static final long CALL_MILLIS = 1000;

    public static void main(String[] args) throws Exception {
        Recorder.Config config = Recorder.Config.read(Paths.get(args[0]));
        Recorder.start(config);
        for (Recorder.Target target : config.targets) {
            try {
                generate(target, config.max);
            } catch (Throwable e) {
                Recorder.dropFor(target, "cannot generate calls: " + e);
            }
        }
        // Calls that ran past their time may still be running: stop here.
        Recorder.counts();
        Runtime.getRuntime().halt(0);
    }

    private static void generate(Recorder.Target target, int max) throws Exception {
        Class<?> owner = Class.forName(target.className, false, Generate.class.getClassLoader());
        Method method = null;
        for (Method candidate : owner.getDeclaredMethods()) {
            if (candidate.getName().equals(target.method) && !candidate.isBridge()
                    && !Modifier.isAbstract(candidate.getModifiers())
                    && matches(target, candidate.getParameterTypes())) {
                method = candidate;
                break;
            }
        }
        if (method == null) {
            Recorder.dropFor(target, "no method " + target.method + " to call");
            return;
        }
        method.setAccessible(true);
        Supplier<Object> receiver = () -> null;
        if (!Modifier.isStatic(method.getModifiers())) {
            if (Modifier.isAbstract(owner.getModifiers()) || owner.isInterface()) {
                Recorder.dropFor(target, "an instance method of an abstract type");
                return;
            }
            Constructor<?> constructor;
            try {
                constructor = owner.getDeclaredConstructor();
            } catch (NoSuchMethodException e) {
                Recorder.dropFor(target, "no receiver: the class has no no-argument constructor");
                return;
            }
            constructor.setAccessible(true);
            receiver = () -> {
                try {
                    return constructor.newInstance();
                } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                    return null;
                }
            };
        }
        Class<?>[] types = method.getParameterTypes();
        List<List<Supplier<Object>>> pools = new ArrayList<>();
        for (Class<?> type : types) {
            pools.add(seeded(type, target));
        }
        String signature = owner.getName() + "\t" + method.getName() + "\t" + descriptor(method);
        Random random = new Random(target.id.hashCode());
        Set<String> seen = new HashSet<>();
        int recorded = 0;
        int thrown = 0;
        for (int attempt = 0; attempt < ATTEMPTS && recorded < max; attempt++) {
            Object self = receiver.get();
            if (!Modifier.isStatic(method.getModifiers()) && self == null) {
                Recorder.dropFor(target, "no receiver: its constructor failed");
                return;
            }
            Object[] arguments = new Object[types.length];
            for (int i = 0; i < types.length; i++) {
                List<Supplier<Object>> pool = pools.get(i);
                // The first attempts walk the pools in order (each value once), then at random.
                int pick = attempt < pool.size() ? attempt : random.nextInt(pool.size());
                arguments[i] = pool.get(Math.min(pick, pool.size() - 1)).get();
            }
            String before = Recorder.xml(new Object[] {self, arguments});
            if (before == null || !seen.add(before)) {
                continue;
            }
            Object[] result = invoke(method, self, arguments);
            if (result == null) {
                Recorder.dropFor(target, "a generated call ran past " + CALL_MILLIS + " ms");
                return;
            }
            Throwable error = (Throwable) result[1];
            if (error != null && (thrown + 1) * 4 > max) {
                continue;
            }
            if (Recorder.writeCall(target, signature, before, self, arguments, result[0], error)) {
                recorded++;
                thrown += error != null ? 1 : 0;
            }
        }
    }

    static boolean matches(Recorder.Target target, Class<?>[] types) {
        if (types.length != target.types.length) {
            return false;
        }
        for (int i = 0; i < types.length; i++) {
            if (!"?".equals(target.types[i]) && !target.types[i].equals(simpleName(types[i]))) {
                return false;
            }
        }
        return true;
    }

    private static String simpleName(Class<?> type) {
        if (type.isArray()) {
            return simpleName(type.getComponentType()) + "[]";
        }
        String name = type.getName();
        return name.substring(Math.max(name.lastIndexOf('.'), name.lastIndexOf('$')) + 1);
    }

    /** {value, thrown} of the call, or null when it ran past its time. */
    private static Object[] invoke(Method method, Object self, Object[] arguments)
            throws InterruptedException {
        AtomicReference<Object[]> done = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                done.set(new Object[] {method.invoke(self, arguments), null});
            } catch (InvocationTargetException e) {
                done.set(new Object[] {null, e.getCause()});
            } catch (Throwable e) {
                done.set(new Object[] {null, e});
            }
        }, "codereval-generate");
        worker.setDaemon(true);
        worker.start();
        worker.join(CALL_MILLIS);
        return done.get();
    }

    static String descriptor(Method method) {
        StringBuilder text = new StringBuilder("(");
        for (Class<?> type : method.getParameterTypes()) {
            text.append(descriptor(type));
        }
        return text.append(')').append(descriptor(method.getReturnType())).toString();
    }

    private static String descriptor(Class<?> type) {
        if (type.isArray()) {
            return type.getName().replace('.', '/');
        }
        if (!type.isPrimitive()) {
            return "L" + type.getName().replace('.', '/') + ";";
        }
        if (type == void.class) return "V";
        if (type == boolean.class) return "Z";
        if (type == byte.class) return "B";
        if (type == char.class) return "C";
        if (type == short.class) return "S";
        if (type == int.class) return "I";
        if (type == long.class) return "J";
        if (type == float.class) return "F";
        return "D";
    }

    private static final String[] TEXTS = {"", "a", "abc", "Hello World", "  padded  ",
        "a,b,,c", "path/to/file.txt", "x.y.z", "ABC abc", "123", "-42", "\t\n", "%s", "$1",
        "camelCaseText", "snake_case_text", "http://example.org/a?b=c"};

    /**
     * The constants of the method's own source first (a method that looks for "http" is tried
     * with "http"), then the type's pool: the first attempts walk the pools in order.
     */
    static List<Supplier<Object>> seeded(Class<?> type, Recorder.Target target) {
        List<Supplier<Object>> values = new ArrayList<>();
        if (type == String.class || type == CharSequence.class || type == Object.class) {
            for (String text : target.texts) {
                values.add(() -> text);
                values.add(() -> "a" + text + "b");
            }
        } else if (type == char.class || type == Character.class) {
            for (char c : target.chars) values.add(() -> c);
        } else if (type == int.class || type == Integer.class) {
            for (long n : target.numbers) {
                for (long v : new long[] {n, n + 1, n - 1}) {
                    if (v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE) values.add(() -> (int) v);
                }
            }
        } else if (type == long.class || type == Long.class) {
            for (long n : target.numbers) {
                for (long v : new long[] {n, n + 1, n - 1}) values.add(() -> v);
            }
        }
        values.addAll(pool(type));
        return values;
    }

    /** Values of a parameter type: suppliers, so each call gets fresh mutable objects. */
    static List<Supplier<Object>> pool(Class<?> type) {
        List<Supplier<Object>> values = new ArrayList<>();
        if (type == int.class || type == Integer.class) {
            for (int v : new int[] {0, 1, -1, 2, 3, 10, 7, 100}) values.add(() -> v);
        } else if (type == long.class || type == Long.class) {
            for (long v : new long[] {0L, 1L, -1L, 2L, 10L, 1000L}) values.add(() -> v);
        } else if (type == short.class || type == Short.class) {
            for (short v : new short[] {0, 1, -1, 7}) values.add(() -> v);
        } else if (type == byte.class || type == Byte.class) {
            for (byte v : new byte[] {0, 1, -1, 7, 127}) values.add(() -> v);
        } else if (type == double.class || type == Double.class) {
            for (double v : new double[] {0.0, 1.5, -2.25, 10.0}) values.add(() -> v);
        } else if (type == float.class || type == Float.class) {
            for (float v : new float[] {0.0f, 1.5f, -2.25f}) values.add(() -> v);
        } else if (type == boolean.class || type == Boolean.class) {
            values.add(() -> true);
            values.add(() -> false);
        } else if (type == char.class || type == Character.class) {
            for (char v : new char[] {'a', ' ', '/', '.', 'Z', '0', ','}) values.add(() -> v);
        } else if (type == String.class || type == CharSequence.class || type == Object.class) {
            for (String v : TEXTS) values.add(() -> v);
            if (type == Object.class) {
                values.add(() -> 42);
                values.add(() -> new ArrayList<>(Arrays.asList("a", "b")));
            }
        } else if (type.isArray()) {
            Class<?> component = type.getComponentType();
            List<Supplier<Object>> items = pool(component);
            values.add(() -> java.lang.reflect.Array.newInstance(component, 0));
            for (int size : new int[] {1, 3}) {
                values.add(() -> {
                    Object array = java.lang.reflect.Array.newInstance(component, size);
                    for (int i = 0; i < size && !items.isEmpty(); i++) {
                        Object item = items.get((i * 3 + size) % items.size()).get();
                        if (item != null || !component.isPrimitive()) {
                            java.lang.reflect.Array.set(array, i, item);
                        }
                    }
                    return array;
                });
            }
        } else if (type.isEnum()) {
            for (Object constant : type.getEnumConstants()) values.add(() -> constant);
        } else if (type.isAssignableFrom(ArrayList.class)) {
            values.add(ArrayList::new);
            values.add(() -> new ArrayList<>(Arrays.asList("a", "b", "c")));
            values.add(() -> new ArrayList<>(Arrays.asList("x", "", "x")));
        } else if (type.isAssignableFrom(LinkedHashSet.class)) {
            values.add(LinkedHashSet::new);
            values.add(() -> new LinkedHashSet<>(Arrays.asList("a", "b")));
        } else if (type.isAssignableFrom(LinkedHashMap.class)) {
            values.add(LinkedHashMap::new);
            values.add(() -> {
                Map<String, Object> map = new LinkedHashMap<>();
                map.put("a", "1");
                map.put("b", 2);
                return map;
            });
        } else if (type == Class.class) {
            values.add(() -> String.class);
            values.add(() -> Integer.class);
            values.add(() -> Object.class);
            values.add(() -> int.class);
        } else if (type.isAssignableFrom(HashMap.class)) {
            values.add(HashMap::new);
        } else if (!type.isInterface() && !Modifier.isAbstract(type.getModifiers())) {
            try {
                Constructor<?> constructor = type.getDeclaredConstructor();
                constructor.setAccessible(true);
                values.add(() -> {
                    try {
                        return constructor.newInstance();
                    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                        return null;
                    }
                });
            } catch (NoSuchMethodException | RuntimeException e) {
                // Only null below.
            }
        }
        if (!type.isPrimitive()) {
            values.add(() -> null);
        }
        return values;
    }
}
