package codereval.harness;

import java.io.ByteArrayInputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Runs one test class and, only when it ran to its end, prints the per-run completion marker.
 *
 * <p>The marker arrives on stdin and is read before any test or sample class is loaded; it is
 * then kept only in this frame's locals (out of reach of reflection) and stdin is replaced by an
 * empty stream. The final line is written to the real stdout even if the code under test
 * replaced System.out, and the JVM then halts so shutdown hooks cannot change the exit code.
 *
 * <p>In junit mode a JUnit 3/4 class with nothing of JUnit 5 in it runs on JUnit 4's own
 * runner, anything else on the JUnit Platform (see runJUnit4).
 *
 * <p>Usage: RunTest main|junit TEST_CLASS, or RunTest tests SELECTOR... where a selector is
 * {@code pkg.Class::method}, {@code pkg.Class}, or {@code @DIR} (every test class under the
 * class folder DIR: a whole suite). The tests mode reports which tests failed, by name, in the
 * marker line, and with {@code -Dcodereval.jacoco=dump} writes JaCoCo's coverage before halting
 * (the agent's own dump runs from a shutdown hook, which halt skips).
 */
public final class RunTest {
    private RunTest() {}

    public static void main(String[] args) throws IOException {
        String marker = new String(System.in.readAllBytes(), StandardCharsets.UTF_8).trim();
        System.setIn(new ByteArrayInputStream(new byte[0]));
        PrintStream realOut = new PrintStream(new FileOutputStream(FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        boolean selecting = args.length >= 2 && "tests".equals(args[0]);
        if ((args.length != 2 && !selecting) || marker.isEmpty()) {
            System.err.println("usage: RunTest main|junit TEST_CLASS | tests SELECTOR..., marker on stdin");
            Runtime.getRuntime().halt(2);
        }
        String status;
        try {
            if (selecting) {
                status = runSelected(java.util.Arrays.copyOfRange(args, 1, args.length));
                dumpCoverage();
            } else {
                status = "main".equals(args[0]) ? runMain(args[1]) : runJUnit(args[1]);
            }
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            cause.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(1);
            return;
        } catch (ReflectiveOperationException | LinkageError e) {
            System.err.println("codereval harness: cannot run " + args[1] + ": " + e);
            System.err.flush();
            Runtime.getRuntime().halt(1);
            return;
        }
        System.out.flush();
        System.err.flush();
        realOut.println(marker + " " + status);
        realOut.flush();
        Runtime.getRuntime().halt(0);
    }

    static String runMain(String testClass) throws ReflectiveOperationException {
        Class<?> cls = Class.forName(testClass, true, RunTest.class.getClassLoader());
        Method main = cls.getMethod("main", String[].class);
        main.invoke(null, (Object) new String[0]);
        return "main";
    }

    /** Counts of what JUnit reported; failures are assertion errors, errors anything else. */
    static final class Tally implements InvocationHandler {
        int tests;
        int failures;
        int errors;
        final java.util.List<String> failed = new java.util.ArrayList<>();

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            switch (method.getName()) {
                case "executionFinished":
                    finished(args[0], args[1]);
                    return null;
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                case "toString":
                    return "codereval tally";
                default:
                    return null;
            }
        }

        private void finished(Object identifier, Object result) throws ReflectiveOperationException {
            boolean isTest = (Boolean) identifier.getClass().getMethod("isTest").invoke(identifier);
            String status = result.getClass().getMethod("getStatus").invoke(result).toString();
            if (isTest) {
                tests++;
            }
            if (!"FAILED".equals(status)) {
                return;
            }
            Optional<?> thrown = (Optional<?>) result.getClass().getMethod("getThrowable")
                    .invoke(result);
            Throwable error = (Throwable) thrown.orElse(null);
            String name = identifier.getClass().getMethod("getDisplayName").invoke(identifier)
                    .toString();
            System.err.println("codereval: FAILED " + name);
            if (error != null) {
                error.printStackTrace();
            }
            failed.add(testName(identifier, name));
            if (isTest && error instanceof AssertionError) {
                failures++;
            } else {
                errors++;
            }
        }
    }

    /** Defects4J's naming: {@code pkg.Class::method} for a test, {@code pkg.Class} for a class. */
    static String testName(Object identifier, String displayName) throws ReflectiveOperationException {
        Optional<?> source = (Optional<?>) identifier.getClass().getMethod("getSource").invoke(identifier);
        Object where = source.orElse(null);
        if (where != null) {
            String kind = where.getClass().getSimpleName();
            String cls = (String) where.getClass().getMethod("getClassName").invoke(where);
            if ("MethodSource".equals(kind)) {
                return cls + "::" + where.getClass().getMethod("getMethodName").invoke(where);
            }
            if ("ClassSource".equals(kind)) {
                return cls;
            }
        }
        return displayName.replace(',', ' ');
    }

    static String runSelected(String[] wanted) throws ReflectiveOperationException {
        Class<?> selectorType = Class.forName("org.junit.platform.engine.DiscoverySelector");
        Class<?> selectors = Class.forName("org.junit.platform.engine.discovery.DiscoverySelectors");
        Object selectorArray = Array.newInstance(selectorType, wanted.length);
        for (int i = 0; i < wanted.length; i++) {
            String one = wanted[i];
            Object selector;
            if (one.startsWith("@")) {
                java.util.Set<java.nio.file.Path> roots =
                        java.util.Collections.singleton(java.nio.file.Paths.get(one.substring(1)));
                Object found = selectors.getMethod("selectClasspathRoots", java.util.Set.class)
                        .invoke(null, roots);
                selector = ((java.util.List<?>) found).get(0);
            } else if (one.contains("::")) {
                int cut = one.indexOf("::");
                selector = selectors.getMethod("selectMethod", String.class, String.class)
                        .invoke(null, one.substring(0, cut), one.substring(cut + 2));
            } else {
                selector = selectors.getMethod("selectClass", String.class).invoke(null, one);
            }
            Array.set(selectorArray, i, selector);
        }
        Tally tally = launch(selectorArray);
        return "tests run=" + tally.tests + " failures=" + tally.failures + " errors="
                + tally.errors + " failed=" + String.join(",", tally.failed);
    }

    /** JaCoCo's runtime API, found by name: the agent is on the class path only when asked. */
    static void dumpCoverage() throws ReflectiveOperationException {
        if (!"dump".equals(System.getProperty("codereval.jacoco"))) {
            return;
        }
        Object agent = Class.forName("org.jacoco.agent.rt.RT").getMethod("getAgent").invoke(null);
        Class<?> agentType = Class.forName("org.jacoco.agent.rt.IAgent");
        agentType.getMethod("dump", boolean.class).invoke(agent, false);
    }

    static String runJUnit(String testClass) throws ReflectiveOperationException {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = RunTest.class.getClassLoader();
        }
        Class<?> cls = Class.forName(testClass, false, loader);
        if (junit4Only(cls, loader)) {
            return runJUnit4(cls, loader);
        }
        Class<?> selectorType = Class.forName("org.junit.platform.engine.DiscoverySelector");
        Class<?> selectors = Class.forName("org.junit.platform.engine.discovery.DiscoverySelectors");
        Object selector = selectors.getMethod("selectClass", String.class).invoke(null, testClass);
        Object selectorArray = Array.newInstance(selectorType, 1);
        Array.set(selectorArray, 0, selector);
        Tally tally = launch(selectorArray);
        return "junit tests=" + tally.tests + " failures=" + tally.failures
                + " errors=" + tally.errors;
    }

    /**
     * A JUnit 3/4 test class with nothing of JUnit 5 in it runs on JUnit 4's own runner, which
     * the Platform's vintage engine would only wrap: the same runner and events, without the
     * Platform's discovery and engines (about half the test JVM's CPU for such a test).
     */
    static String runJUnit4(Class<?> cls, ClassLoader loader) throws ReflectiveOperationException {
        Class<?> core = Class.forName("org.junit.runner.JUnitCore", true, loader);
        Object array = Array.newInstance(Class.class, 1);
        Array.set(array, 0, cls);
        Object result = core.getMethod("runClasses", Class[].class).invoke(null, array);
        int tests = (Integer) result.getClass().getMethod("getRunCount").invoke(result);
        int failures = 0;
        int errors = 0;
        for (Object failure : (java.util.List<?>) result.getClass().getMethod("getFailures")
                .invoke(result)) {
            Object description = failure.getClass().getMethod("getDescription").invoke(failure);
            boolean isTest = (Boolean) description.getClass().getMethod("isTest")
                    .invoke(description);
            Throwable error = (Throwable) failure.getClass().getMethod("getException")
                    .invoke(failure);
            System.err.println("codereval: FAILED "
                    + description.getClass().getMethod("getDisplayName").invoke(description));
            if (error != null) {
                error.printStackTrace();
            }
            if (isTest && error instanceof AssertionError) {
                failures++;
            } else {
                errors++;
            }
        }
        return "junit tests=" + tests + " failures=" + failures + " errors=" + errors;
    }

    /**
     * Whether the class is a JUnit 3/4 test (extends TestCase, or has @RunWith or @org.junit.Test)
     * with no JUnit 5 annotation, meta-annotations included, on it, its members, nested classes,
     * superclasses or interfaces, and JUnit 4 is on the classpath. Anything else, or anything
     * that cannot be inspected, goes to the Platform; so does everything under
     * {@code -Dcodereval.junit4.direct=false}.
     */
    static boolean junit4Only(Class<?> cls, ClassLoader loader) {
        if ("false".equals(System.getProperty("codereval.junit4.direct"))) {
            return false;
        }
        try {
            Class.forName("org.junit.runner.JUnitCore", false, loader);
            return junit4Test(cls) && !jupiterIn(cls, new java.util.HashSet<>());
        } catch (ClassNotFoundException | LinkageError | SecurityException e) {
            return false;
        }
    }

    /** What JUnit 4 itself runs in a class: a TestCase, a @RunWith, or @Test methods. */
    private static boolean junit4Test(Class<?> cls) {
        for (Class<?> c = cls; c != null && c != Object.class; c = c.getSuperclass()) {
            if ("junit.framework.TestCase".equals(c.getName())) {
                return true;
            }
            for (java.lang.annotation.Annotation annotation : c.getDeclaredAnnotations()) {
                if ("org.junit.runner.RunWith".equals(annotation.annotationType().getName())) {
                    return true;
                }
            }
            for (Method method : c.getDeclaredMethods()) {
                for (java.lang.annotation.Annotation annotation : method.getDeclaredAnnotations()) {
                    if ("org.junit.Test".equals(annotation.annotationType().getName())) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static boolean jupiterIn(Class<?> cls, java.util.Set<Class<?>> seen) {
        if (cls == null || cls == Object.class || !seen.add(cls)) {
            return false;
        }
        Method[] methods = cls.getDeclaredMethods();
        java.util.List<java.lang.reflect.AnnotatedElement> parts = new java.util.ArrayList<>();
        parts.add(cls);
        parts.addAll(java.util.Arrays.asList(methods));
        parts.addAll(java.util.Arrays.asList(cls.getDeclaredFields()));
        parts.addAll(java.util.Arrays.asList(cls.getDeclaredConstructors()));
        for (Method method : methods) {
            parts.addAll(java.util.Arrays.asList(method.getParameters()));
        }
        for (java.lang.reflect.AnnotatedElement part : parts) {
            for (java.lang.annotation.Annotation annotation : part.getDeclaredAnnotations()) {
                if (jupiterAnnotation(annotation.annotationType(), new java.util.HashSet<>())) {
                    return true;
                }
            }
        }
        for (Class<?> inner : cls.getDeclaredClasses()) {
            if (jupiterIn(inner, seen)) {
                return true;
            }
        }
        for (Class<?> face : cls.getInterfaces()) {
            if (jupiterIn(face, seen)) {
                return true;
            }
        }
        return jupiterIn(cls.getSuperclass(), seen);
    }

    private static boolean jupiterAnnotation(Class<?> type, java.util.Set<Class<?>> seen) {
        if (type.getName().startsWith("org.junit.jupiter.")) {
            return true;
        }
        if (type.getName().startsWith("java.lang.annotation.") || !seen.add(type)) {
            return false;
        }
        for (java.lang.annotation.Annotation meta : type.getDeclaredAnnotations()) {
            if (jupiterAnnotation(meta.annotationType(), seen)) {
                return true;
            }
        }
        return false;
    }

    static Tally launch(Object selectorArray) throws ReflectiveOperationException {
        ClassLoader loader = RunTest.class.getClassLoader();
        Class<?> builderType =
                Class.forName("org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder");
        Object builder = builderType.getMethod("request").invoke(null);
        builderType.getMethod("selectors", selectorArray.getClass()).invoke(builder, selectorArray);
        Object request = builderType.getMethod("build").invoke(builder);
        Class<?> requestType = Class.forName("org.junit.platform.launcher.LauncherDiscoveryRequest");
        Class<?> listenerType = Class.forName("org.junit.platform.launcher.TestExecutionListener");
        Object launcher = Class.forName("org.junit.platform.launcher.core.LauncherFactory")
                .getMethod("create").invoke(null);
        Tally tally = new Tally();
        Object listener = Proxy.newProxyInstance(loader, new Class<?>[] {listenerType}, tally);
        Object listeners = Array.newInstance(listenerType, 1);
        Array.set(listeners, 0, listener);
        Class<?> launcherType = Class.forName("org.junit.platform.launcher.Launcher");
        launcherType.getMethod("execute", requestType, listeners.getClass())
                .invoke(launcher, request, listeners);
        return tally;
    }
}
