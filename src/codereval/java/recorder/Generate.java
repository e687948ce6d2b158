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
 * arguments drawn from small pools by parameter type (the constants of the method's own source
 * first, then numbers, short texts, small arrays and collections, an enum's constants), a
 * receiver from the class's simplest constructor that works. Each call is run on the project
 * as built and written exactly as the recorder writes a recorded one (same file format, same
 * XStream XML), so the rest of {@code build java-tests} treats them alike: replayed three
 * times, checked by mutants.
 *
 * <p>By default the inputs are the ones hand-written tests (CoderEval's among them) use: no
 * empty text, array or collection, no negative number, and no call on which the method throws
 * (a test that passes the reference cannot hold one: the throw would end it). Null stays: such
 * tests pass it as often as not. The edges left out are where a reference's undocumented
 * choices ("" found at 0 or -1, an index past the end) decide, and a test that pins them fails
 * samples the official test passed. With {@code edges true} in the configuration the pools
 * hold them too, and up to a quarter of a method's calls may throw.
 *
 * <p>Usage: Generate CONFIG (the recorder's configuration). A call that runs past a second
 * ends the method's generation.
 */
public final class Generate {
    private Generate() {}

    private static final int ATTEMPTS = 400;
    private static final long CALL_MILLIS = 1000;

    /** Whether the pools hold null, empty values and negatives (set once, from the config). */
    static boolean edges;

    /** The folders of the project's own classes (from the config). */
    static List<java.nio.file.Path> classFolders = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        Recorder.Config config = Recorder.Config.read(Paths.get(args[0]));
        edges = config.edges;
        classFolders = config.classes;
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
                receiver = inheriting(owner, method);
                if (receiver == null) {
                    Recorder.dropFor(target, "an instance method of an abstract type, and no "
                        + "concrete class of the project that inherits it makes an instance");
                    return;
                }
            } else {
                receiver = instances(owner, 3);
            }
            if (receiver == null) {
                Recorder.dropFor(target, "no receiver: no constructor of the class makes one "
                    + "from generated arguments");
                return;
            }
        }
        Class<?>[] types = method.getParameterTypes();
        List<List<Supplier<Object>>> pools = new ArrayList<>();
        for (Class<?> type : types) {
            List<Supplier<Object>> pool = seeded(type, target);
            if (pool.isEmpty()) {
                Recorder.dropFor(target, "no generated value of type " + type.getName());
                return;
            }
            pools.add(pool);
        }
        String signature = owner.getName() + "\t" + method.getName() + "\t" + descriptor(method);
        Random random = new Random(target.id.hashCode());
        Set<String> seen = new HashSet<>();
        int recorded = 0;
        int thrown = 0;
        int tried = 0;
        int unwritten = 0;
        String unwrittenWhy = null;
        Throwable firstError = null;
        // Calls are kept in memory and written at the end: past max, while every call kept
        // so far did the same (returned one value, or left its inputs as they were), the
        // attempts go on for a call that does otherwise, since a test made only of such calls
        // cannot tell the method from a body that does nothing.
        List<String[]> kept = new ArrayList<>();
        Set<String> outcomes = new HashSet<>();
        for (int attempt = 0; attempt < ATTEMPTS
                && (kept.size() < max || (outcomes.size() < 2 && kept.size() < 4 * max));
                attempt++) {
            Object self = receiver.get();
            if (!Modifier.isStatic(method.getModifiers()) && self == null) {
                Recorder.dropFor(target, "no receiver: its constructor failed");
                return;
            }
            Object[] arguments = new Object[types.length];
            for (int i = 0; i < types.length; i++) {
                List<Supplier<Object>> pool = pools.get(i);
                // The first attempts walk the pools in order (each value once): on even ones
                // in step (two texts alike: a text found in itself), on odd ones each
                // parameter at its own stride (two texts apart); then at random.
                int stride = attempt % 2 == 0 ? 1 : 2 * i + 1;
                int pick = attempt < pool.size() ? (attempt * stride + i * (stride - 1) / 2)
                    % pool.size() : random.nextInt(pool.size());
                arguments[i] = pool.get(pick).get();
            }
            String before = Recorder.xml(new Object[] {self, arguments});
            if (before == null) {
                unwritten++;
                unwrittenWhy = unwrittenWhy != null ? unwrittenWhy : Recorder.lastError();
                continue;
            }
            if (!seen.add(before)) {
                continue;
            }
            tried++;
            Object[] result = invoke(method, self, arguments);
            if (result == null) {
                Recorder.dropFor(target, "a generated call ran past " + CALL_MILLIS + " ms");
                return;
            }
            Throwable error = (Throwable) result[1];
            if (error != null && firstError == null) {
                firstError = error;
            }
            if (error != null && (!edges || (thrown + 1) * 4 > max)) {
                continue;
            }
            String[] fields = Recorder.serialise(target, signature, before, self, arguments,
                result[0], error);
            if (fields != null) {
                kept.add(fields);
                outcomes.add(outcomeOf(fields));
                thrown += error != null ? 1 : 0;
            } else {
                unwritten++;
                unwrittenWhy = unwrittenWhy != null ? unwrittenWhy : Recorder.lastError();
            }
        }
        for (String[] fields : chosen(kept, max)) {
            if (Recorder.emit(target, fields)) {
                recorded++;
            }
        }
        if (recorded == 0) {
            // Say why, as the other ends do: the task's check then tells what it would take.
            Recorder.dropFor(target, "no generated call kept: " + tried + " distinct call(s) made"
                + (firstError == null ? "" : ", the first to throw threw " + firstError)
                + (unwritten == 0 ? "" : ", " + unwritten + " did not serialise (receiver, "
                + "arguments or result: " + unwrittenWhy + ")"));
        }
    }

    /** What a call did, as far as telling it from a body that does nothing goes. */
    static String outcomeOf(String[] fields) {
        return fields[2] + "\0" + fields[3] + "\0" + fields[1].equals(fields[4]);
    }

    /**
     * Up to {@code max} of {@code kept}, in the order they were made: the first call of each
     * distinct outcome, then the others in order.
     */
    static List<String[]> chosen(List<String[]> kept, int max) {
        Set<String> seen = new HashSet<>();
        boolean[] take = new boolean[kept.size()];
        int taken = 0;
        for (int i = 0; i < kept.size() && taken < max; i++) {
            if (seen.add(outcomeOf(kept.get(i)))) {
                take[i] = true;
                taken++;
            }
        }
        for (int i = 0; i < kept.size() && taken < max; i++) {
            if (!take[i]) {
                take[i] = true;
                taken++;
            }
        }
        List<String[]> result = new ArrayList<>();
        for (int i = 0; i < kept.size(); i++) {
            if (take[i]) {
                result.add(kept.get(i));
            }
        }
        return result;
    }

    /**
     * Receivers for an instance method of an abstract class: instances of a concrete class of
     * the project that inherits the method as it is (one that overrides it would run its own
     * code, not the task's), those of the method's package first; null when none is made.
     */
    static Supplier<Object> inheriting(Class<?> owner, Method method) {
        List<Class<?>> candidates = concrete(owner);
        candidates.removeIf(type -> overrides(type, method));
        return firstMade(candidates, 3);
    }

    /** Instances of the first of {@code candidates} that {@link #instances} can make. */
    private static Supplier<Object> firstMade(List<Class<?>> candidates, int depth) {
        for (Class<?> candidate : candidates) {
            Supplier<Object> made = instances(candidate, depth);
            if (made != null) {
                return made;
            }
        }
        return null;
    }

    /** Whether {@code type}, or a class between it and the method's, declares the method. */
    static boolean overrides(Class<?> type, Method method) {
        for (Class<?> level = type; level != null && level != method.getDeclaringClass();
                level = level.getSuperclass()) {
            try {
                level.getDeclaredMethod(method.getName(), method.getParameterTypes());
                return true;
            } catch (NoSuchMethodException e) {
                // not here: its superclass next
            } catch (Throwable e) {
                return true;
            }
        }
        return false;
    }

    /**
     * Fresh instances of a concrete class, or null when none can be made: from its no-argument
     * constructor, else from the constructor with the fewest parameters whose generated
     * arguments make one (a copy constructor, taking the class itself, is never used). {@code
     * depth} bounds how deep constructor arguments may themselves be constructed. Arguments
     * without null are tried first: an object built from nulls mostly fails in every method.
     */
    static Supplier<Object> instances(Class<?> type, int depth) {
        if (type.isInterface() || Modifier.isAbstract(type.getModifiers()) || type.isArray()
                || type.isPrimitive() || type.isEnum()) {
            return null;
        }
        Constructor<?>[] constructors = type.getDeclaredConstructors();
        Arrays.sort(constructors, (a, b) -> Integer.compare(a.getParameterCount(),
                                                            b.getParameterCount()));
        for (boolean nulls : new boolean[] {false, true}) {
            for (Constructor<?> constructor : constructors) {
                Supplier<Object> made = instances(type, constructor, depth, nulls);
                if (made != null) {
                    return made;
                }
            }
        }
        return null;
    }

    private static Supplier<Object> instances(Class<?> type, Constructor<?> constructor,
                                              int depth, boolean nulls) {
        if (constructor.isSynthetic() || (constructor.getParameterCount() > 0 && depth <= 0)
                || (nulls && constructor.getParameterCount() == 0)
                || Arrays.asList(constructor.getParameterTypes()).contains(type)) {
            return null;
        }
        try {
            constructor.setAccessible(true);
        } catch (RuntimeException e) {
            return null;
        }
        List<List<Supplier<Object>>> pools = new ArrayList<>();
        for (Class<?> parameter : constructor.getParameterTypes()) {
            List<Supplier<Object>> pool = nulls ? pool(parameter, depth - 1)
                : values(parameter, depth - 1);
            if (pool.isEmpty()) {
                return null;
            }
            pools.add(pool);
        }
        // The arguments that made an instance are kept, and the instances made in turn from
        // them: a method without parameters still sees several receivers.
        List<Supplier<Object>[]> working = new ArrayList<>();
        for (int attempt = 0; attempt < 16 && working.size() < 8; attempt++) {
            Supplier<Object>[] chosen = pick(pools, attempt);
            if (timed(() -> construct(constructor, chosen)) != null) {
                working.add(chosen);
            }
        }
        if (working.isEmpty()) {
            return null;
        }
        int[] turn = {0};
        return () -> construct(constructor, working.get(turn[0]++ % working.size()));
    }

    @SuppressWarnings("unchecked")
    private static Supplier<Object>[] pick(List<List<Supplier<Object>>> pools, int attempt) {
        Supplier<Object>[] chosen = new Supplier[pools.size()];
        for (int i = 0; i < chosen.length; i++) {
            List<Supplier<Object>> pool = pools.get(i);
            chosen[i] = pool.get((attempt + i) % pool.size());
        }
        return chosen;
    }

    /**
     * What {@code make} returns, on a thread of its own, or null when it returns null or runs
     * past CALL_MILLIS (the thread is left behind: main halts the JVM at the end).
     */
    private static Object timed(Supplier<Object> make) {
        AtomicReference<Object> done = new AtomicReference<>();
        Thread worker = new Thread(() -> done.set(make.get()), "codereval-generate");
        worker.setDaemon(true);
        worker.start();
        try {
            worker.join(CALL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return done.get();
    }

    private static Object construct(Constructor<?> constructor, Supplier<Object>[] chosen) {
        Object[] arguments = new Object[chosen.length];
        for (int i = 0; i < chosen.length; i++) {
            arguments[i] = chosen[i].get();
            if (arguments[i] == null && constructor.getParameterTypes()[i].isPrimitive()) {
                return null;
            }
        }
        try {
            return constructor.newInstance(arguments);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
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
    private static Object[] invoke(Method method, Object self, Object[] arguments) {
        return (Object[]) timed(() -> {
            try {
                return new Object[] {method.invoke(self, arguments), null};
            } catch (InvocationTargetException e) {
                return new Object[] {null, e.getCause()};
            } catch (Throwable e) {
                return new Object[] {null, e};
            }
        });
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

    private static final String[] TEXTS = {"a", "abc", "Hello World", "  padded  ", "a,b,,c",
        "path/to/file.txt", "x.y.z", "ABC abc", "123", "%s", "$1", "camelCaseText",
        "snake_case_text", "http://example.org/a?b=c"};

    /** The edges a typical call leaves out (see the class comment). */
    private static final String[] EDGE_TEXTS = {"", "-42", "\t\n"};

    /**
     * The constants of the method's own source first (a method that looks for "http" is tried
     * with "http"), then the type's pool: the first attempts walk the pools in order.
     */
    static List<Supplier<Object>> seeded(Class<?> type, Recorder.Target target) {
        List<Supplier<Object>> values = new ArrayList<>();
        if (type == String.class || type == CharSequence.class || type == Object.class) {
            for (String text : target.texts) {
                if (!text.isEmpty() || edges) {
                    values.add(() -> text);
                }
                values.add(() -> "a" + text + "b");
            }
        } else if (type == char.class || type == Character.class) {
            for (char c : target.chars) values.add(() -> c);
            // A number the method compares a char with (ch < 32, ch == 127), and beside it:
            // from 32 up only, since a smaller constant (0, 1, 2) is an index or a count far
            // more often than a character code, and \0 crowds out the texts' own characters.
            for (long n : target.numbers) {
                for (long v : new long[] {n, n - 1, n + 1}) {
                    if (n >= 32 && v <= Character.MAX_VALUE) values.add(() -> (char) v);
                }
            }
        } else if (type == int.class || type == Integer.class) {
            for (long n : target.numbers) {
                for (long v : new long[] {n, n + 1, n - 1}) {
                    if (v >= (edges ? Integer.MIN_VALUE : 0) && v <= Integer.MAX_VALUE) {
                        values.add(() -> (int) v);
                    }
                }
            }
        } else if (type == long.class || type == Long.class) {
            for (long n : target.numbers) {
                for (long v : new long[] {n, n + 1, n - 1}) {
                    if (v >= 0 || edges) values.add(() -> v);
                }
            }
        }
        values.addAll(pool(type, 2));
        return values;
    }

    /**
     * Values of a parameter type: suppliers, so each call gets fresh mutable objects. {@code
     * depth} is how deep a class's constructor arguments may be made (see instances).
     */
    static List<Supplier<Object>> pool(Class<?> type, int depth) {
        List<Supplier<Object>> values = values(type, depth);
        if (!type.isPrimitive()) {
            values.add(() -> null);
        }
        return values;
    }

    /** The pool without null. */
    static List<Supplier<Object>> values(Class<?> type, int depth) {
        List<Supplier<Object>> values = new ArrayList<>();
        if (type == int.class || type == Integer.class) {
            for (int v : new int[] {0, 1, 2, 3, 10, 7, 100}) values.add(() -> v);
            if (edges) values.add(() -> -1);
        } else if (type == long.class || type == Long.class) {
            for (long v : new long[] {0L, 1L, 2L, 10L, 1000L}) values.add(() -> v);
            if (edges) values.add(() -> -1L);
        } else if (type == short.class || type == Short.class) {
            for (short v : new short[] {0, 1, 7}) values.add(() -> v);
            if (edges) values.add(() -> (short) -1);
        } else if (type == byte.class || type == Byte.class) {
            for (byte v : new byte[] {0, 1, 7, 127}) values.add(() -> v);
            if (edges) values.add(() -> (byte) -1);
        } else if (type == double.class || type == Double.class) {
            for (double v : new double[] {0.0, 1.5, 10.0}) values.add(() -> v);
            if (edges) values.add(() -> -2.25);
        } else if (type == float.class || type == Float.class) {
            for (float v : new float[] {0.0f, 1.5f}) values.add(() -> v);
            if (edges) values.add(() -> -2.25f);
        } else if (type == boolean.class || type == Boolean.class) {
            values.add(() -> true);
            values.add(() -> false);
        } else if (type == char.class || type == Character.class) {
            for (char v : new char[] {'a', ' ', '/', '.', 'Z', '0', ','}) values.add(() -> v);
        } else if (type == String.class || type == CharSequence.class || type == Object.class) {
            for (String v : TEXTS) values.add(() -> v);
            if (edges) {
                for (String v : EDGE_TEXTS) values.add(() -> v);
            }
            if (type == Object.class) {
                values.add(() -> 42);
                values.add(() -> new ArrayList<>(Arrays.asList("a", "b")));
            }
        } else if (type.isArray()) {
            Class<?> component = type.getComponentType();
            List<Supplier<Object>> items = pool(component, depth);
            if (edges) {
                values.add(() -> java.lang.reflect.Array.newInstance(component, 0));
            }
            for (int size : new int[] {1, 3}) {
                if (items.isEmpty()) {
                    break;
                }
                values.add(() -> {
                    Object array = java.lang.reflect.Array.newInstance(component, size);
                    for (int i = 0; i < size; i++) {
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
            if (edges) values.add(ArrayList::new);
            values.add(() -> new ArrayList<>(Arrays.asList("a", "b", "c")));
            values.add(() -> new ArrayList<>(Arrays.asList("x", "y", "x")));
        } else if (type.isAssignableFrom(LinkedHashSet.class)) {
            if (edges) values.add(LinkedHashSet::new);
            values.add(() -> new LinkedHashSet<>(Arrays.asList("a", "b")));
        } else if (type.isAssignableFrom(LinkedHashMap.class)) {
            if (edges) values.add(LinkedHashMap::new);
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
            values.add(() -> {
                Map<String, Object> map = new HashMap<>();
                map.put("a", "1");
                return map;
            });
            if (edges) values.add(HashMap::new);
        } else if (type.isAssignableFrom(java.io.ByteArrayInputStream.class)) {
            // InputStream and what it extends: bytes of text, as a stream read by the method.
            for (String text : STREAM_TEXTS) {
                values.add(() -> new java.io.ByteArrayInputStream(
                    text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            }
        } else if (type.isAssignableFrom(java.io.StringReader.class)) {
            for (String text : STREAM_TEXTS) values.add(() -> new java.io.StringReader(text));
        } else if (type == java.nio.ByteBuffer.class || type == java.nio.Buffer.class) {
            for (String text : STREAM_TEXTS) {
                values.add(() -> java.nio.ByteBuffer.wrap(
                    text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            }
        } else if (type.isAssignableFrom(java.io.ByteArrayOutputStream.class)) {
            values.add(java.io.ByteArrayOutputStream::new);
        } else if (type.isAssignableFrom(java.io.StringWriter.class)) {
            values.add(java.io.StringWriter::new);
        } else if (type == java.util.Iterator.class) {
            values.add(() -> Arrays.asList("a", "b", "c").iterator());
        } else if (type == java.util.Enumeration.class) {
            values.add(() -> java.util.Collections.enumeration(Arrays.asList("a", "b", "c")));
        } else if ((type.isInterface() || Modifier.isAbstract(type.getModifiers()))
                && !type.getName().startsWith("java.")) {
            // An interface or abstract class of the project (a request, a resource): a concrete
            // class of the project that implements it, if one can be made.
            Supplier<Object> made = implementing(type, depth);
            if (made != null) {
                values.add(made);
            }
        } else {
            Supplier<Object> made = instances(type, depth);
            if (made != null) {
                values.add(made);
            }
        }
        return values;
    }

    /** What an InputStream, a Reader or a ByteBuffer parameter reads. */
    private static final String[] STREAM_TEXTS = {"hello world\nsecond line\n", "a=1&b=2"};

    private static final Map<Class<?>, Supplier<Object>> IMPLEMENTING = new HashMap<>();

    /** Instances of a concrete class of the project assignable to {@code type}, those of its
     * package first; null when there is none or none can be made. */
    static Supplier<Object> implementing(Class<?> type, int depth) {
        if (IMPLEMENTING.containsKey(type)) {
            return IMPLEMENTING.get(type);
        }
        // Held as none while it is looked for: a constructor that takes the type itself.
        IMPLEMENTING.put(type, null);
        Supplier<Object> found = firstMade(concrete(type), depth);
        IMPLEMENTING.put(type, found);
        return found;
    }

    /** The project's concrete classes assignable to {@code type}, its package's first. */
    static List<Class<?>> concrete(Class<?> type) {
        String home = type.getPackage() == null ? "" : type.getPackage().getName() + ".";
        List<Class<?>> found = new ArrayList<>();
        for (Class<?> candidate : projectTypes()) {
            if (candidate != type && type.isAssignableFrom(candidate) && !candidate.isInterface()
                    && !Modifier.isAbstract(candidate.getModifiers())) {
                found.add(candidate);
            }
        }
        found.sort(java.util.Comparator.comparing(candidate -> !candidate.getName()
            .startsWith(home) || candidate.getName().indexOf('.', home.length()) >= 0));
        return found;
    }

    private static List<Class<?>> loaded;

    /**
     * The project's classes (not anonymous ones), listed from its class folders and loaded
     * once, the first time a subclass is looked for; not initialised: nothing of theirs runs.
     */
    static List<Class<?>> projectTypes() {
        if (loaded != null) {
            return loaded;
        }
        List<String> names = new ArrayList<>();
        for (java.nio.file.Path root : classFolders) {
            if (!java.nio.file.Files.isDirectory(root)) {
                continue;
            }
            try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(root)) {
                files.map(file -> root.relativize(file).toString())
                    .filter(name -> name.endsWith(".class") && !name.matches(".*\\$[0-9].*"))
                    .map(name -> name.substring(0, name.length() - 6).replace('/', '.'))
                    .forEach(names::add);
            } catch (java.io.IOException | java.io.UncheckedIOException e) {
                // a folder that cannot be read: no candidates from it
            }
        }
        java.util.Collections.sort(names);
        loaded = new ArrayList<>();
        for (String name : names) {
            try {
                loaded.add(Class.forName(name, false, Generate.class.getClassLoader()));
            } catch (Throwable e) {
                // a class whose dependencies are not on the classpath: not a candidate
            }
        }
        return loaded;
    }
}
