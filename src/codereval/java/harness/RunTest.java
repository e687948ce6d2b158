package codereval.harness;

import java.io.ByteArrayInputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * Runs one test class and, only when it ran to its end, prints the per-run completion marker.
 *
 * <p>The marker arrives on stdin and is read before any test or sample class is loaded, straight
 * from file descriptor 0 into native memory (a direct buffer: never through System.in, whose
 * buffer would keep a copy). It is kept XOR-masked with a random pad, both in direct buffers
 * that only this frame's locals refer to (out of reach of reflection; a heap dump holds no
 * direct buffer's contents), and the plaintext buffer is zeroed: no String or byte[] of it
 * exists until the test has ended. System.in is replaced by an empty stream. The final line is
 * written, as bytes, to the real stdout even if the code under test replaced System.out, and the
 * JVM then halts so shutdown hooks cannot change the exit code. (Code in this JVM that reads its
 * own memory through /proc/self/mem, and knows where to look, can still unmask it: no harness
 * in the same process can prevent that.)
 *
 * <p>In junit mode a JUnit 3/4 class with nothing of JUnit 5 in it runs on JUnit 4's own
 * runner, anything else on the JUnit Platform (see runJUnit4).
 *
 * <p>Usage: RunTest main|junit TEST_CLASS, or RunTest tests SELECTOR... where a selector is
 * {@code pkg.Class::method}, {@code pkg.Class}, or {@code @DIR} (every test class under the
 * class folder DIR: a whole suite), and {@code !pkg.Class::method} or {@code !pkg.Class} leaves
 * that test (or that class's tests) out of what the others select. The tests mode reports which
 * tests failed, by name, in the marker line, and with {@code -Dcodereval.jacoco=dump} writes
 * JaCoCo's coverage before halting (the agent's own dump runs from a shutdown hook, which halt
 * skips).
 */
public final class RunTest {
    private RunTest() {}

    /** Bytes of stdin read at most: a marker is 47 and a newline. */
    private static final int MARKER_MAX = 512;

    public static void main(String[] args) throws IOException {
        ByteBuffer[] kept = takeMarker();
        ByteBuffer masked = kept[0];
        ByteBuffer pad = kept[1];
        kept = null;
        System.setIn(new ByteArrayInputStream(new byte[0]));
        FileOutputStream realOut = new FileOutputStream(FileDescriptor.out);
        // What runs next may close System.out (Commons CSV's printer tests close the stream
        // they print to): that must not close the descriptor the marker line is written to.
        System.setOut(new java.io.PrintStream(new java.io.BufferedOutputStream(
                new java.io.FilterOutputStream(new FileOutputStream(FileDescriptor.out)) {
                    @Override
                    public void write(byte[] b, int off, int len) throws IOException {
                        out.write(b, off, len);
                    }

                    @Override
                    public void close() throws IOException {
                        flush();
                    }
                }, 8192), true));
        boolean selecting = args.length >= 2 && "tests".equals(args[0]);
        if ((args.length != 2 && !selecting) || masked.capacity() == 0) {
            System.err.println("usage: RunTest main|junit TEST_CLASS | tests SELECTOR..., marker on stdin");
            Runtime.getRuntime().halt(2);
        }
        String status = null;
        try {
            status = unverifiedClasses();
            if (status != null) {
                // Not the sample's code: report it under the marker and run nothing.
            } else if (selecting) {
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
        // The test has ended: only now does the plaintext exist on the heap, in the line.
        byte[] tail = (" " + status + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] line = new byte[masked.capacity() + tail.length];
        for (int i = 0; i < masked.capacity(); i++) {
            line[i] = (byte) (masked.get(i) ^ pad.get(i));
        }
        System.arraycopy(tail, 0, line, masked.capacity(), tail.length);
        realOut.write(line);
        realOut.flush();
        // A run that tested nothing must not exit 0 (compat mode judges stdout and the exit).
        Runtime.getRuntime().halt(status.startsWith(UNVERIFIED) ? 1 : 0);
    }

    /** The status that starts a run's marker line when the sample's classes are not the ones the JVM found. */
    static final String UNVERIFIED = "unverified";

    /**
     * Null when every class compiled from the sample (the class files below the folder named by
     * {@code -Dcodereval.sample.classes}) is, for this JVM, the one in that folder; else why not.
     *
     * <p>The test's verdict is only about the sample when the JVM runs the sample's classes. A
     * class of the same name elsewhere on the class path (the project's own build of the original
     * method, a class-data sharing archive) would otherwise run silently in their place, should
     * the folder be missing, unreadable, empty or shadowed: a wrong sample would pass. Each class
     * is loaded without being initialised, so none of the sample's code runs here; one that
     * cannot be loaded is left to the test, which fails on it as it would have anyway.
     */
    static String unverifiedClasses() {
        String folder = System.getProperty("codereval.sample.classes");
        if (folder == null) {
            return null;
        }
        java.io.File root = new java.io.File(folder).getAbsoluteFile();
        java.util.List<String> names = new java.util.ArrayList<>();
        classFiles(root, "", names);
        if (names.isEmpty()) {
            return UNVERIFIED + ": no class in " + root;
        }
        ClassLoader loader = RunTest.class.getClassLoader();
        for (String name : names) {
            if (name.endsWith("module-info") || name.endsWith("package-info")) {
                continue;
            }
            Class<?> found;
            try {
                found = Class.forName(name, false, loader);
            } catch (ClassNotFoundException e) {
                return UNVERIFIED + ": " + name + " is not found on the class path";
            } catch (LinkageError e) {
                continue;
            }
            java.security.CodeSource source = found.getProtectionDomain().getCodeSource();
            java.io.File from = null;
            try {
                if (source != null && source.getLocation() != null
                        && "file".equals(source.getLocation().getProtocol())) {
                    from = new java.io.File(source.getLocation().toURI()).getAbsoluteFile();
                }
            } catch (java.net.URISyntaxException | IllegalArgumentException e) {
                from = null;
            }
            if (from == null || !from.equals(root)) {
                return UNVERIFIED + ": " + name + " was loaded from "
                        + (source == null ? "no code source" : source.getLocation())
                        + ", not from the sample's " + root;
            }
        }
        return null;
    }

    private static void classFiles(java.io.File folder, String prefix, java.util.List<String> into) {
        java.io.File[] entries = folder.listFiles();
        if (entries == null) {
            return;
        }
        for (java.io.File entry : entries) {
            String name = entry.getName();
            if (entry.isDirectory()) {
                classFiles(entry, prefix + name + ".", into);
            } else if (name.endsWith(".class")) {
                into.add(prefix + name.substring(0, name.length() - ".class".length()));
            }
        }
    }

    /**
     * The marker from stdin (read to its end, MARKER_MAX bytes at most), as {masked, pad}: two
     * direct buffers of its length whose XOR is the marker, surrounding whitespace left out.
     */
    private static ByteBuffer[] takeMarker() throws IOException {
        // Never closed: that would close descriptor 0 (the stream was given it, owns nothing).
        FileChannel in = new FileInputStream(FileDescriptor.in).getChannel();
        ByteBuffer plain = ByteBuffer.allocateDirect(MARKER_MAX);
        while (plain.hasRemaining() && in.read(plain) > 0) {
            // a direct buffer is read into in place: no copy on the heap or a native stack
        }
        int start = 0;
        int end = plain.position();
        while (start < end && (plain.get(start) & 0xff) <= ' ') {
            start++;
        }
        while (end > start && (plain.get(end - 1) & 0xff) <= ' ') {
            end--;
        }
        ByteBuffer pad = ByteBuffer.allocateDirect(end - start);
        randomBytes(pad);
        ByteBuffer masked = ByteBuffer.allocateDirect(end - start);
        for (int i = 0; i < end - start; i++) {
            masked.put(i, (byte) (plain.get(start + i) ^ pad.get(i)));
        }
        for (int i = 0; i < plain.capacity(); i++) {
            plain.put(i, (byte) 0);
        }
        return new ByteBuffer[] {masked, pad};
    }

    /** Fills the buffer from /dev/urandom (no SecureRandom: its providers slow every start). */
    private static void randomBytes(ByteBuffer into) {
        try (FileInputStream urandom = new FileInputStream("/dev/urandom")) {
            FileChannel channel = urandom.getChannel();
            while (into.hasRemaining() && channel.read(into) > 0) {
                // filled in place
            }
        } catch (IOException e) {
            // filled below
        }
        if (into.hasRemaining()) {
            SplittableRandom random = new SplittableRandom();
            while (into.hasRemaining()) {
                into.put((byte) random.nextInt(256));
            }
        }
        into.clear();
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
                String name = testName(identifier, identifier.getClass()
                        .getMethod("getDisplayName").invoke(identifier).toString());
                dumpTestCoverage(name);
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
        String name = sourceName(
                (Optional<?>) identifier.getClass().getMethod("getSource").invoke(identifier));
        return name != null ? name : displayName.replace(',', ' ');
    }

    /** A test source's Defects4J name (see testName), or null for a source of another kind. */
    static String sourceName(Optional<?> source) throws ReflectiveOperationException {
        Object where = source.orElse(null);
        if (where == null) {
            return null;
        }
        String kind = where.getClass().getSimpleName();
        if (!"MethodSource".equals(kind) && !"ClassSource".equals(kind)) {
            return null;
        }
        String cls = (String) where.getClass().getMethod("getClassName").invoke(where);
        if ("MethodSource".equals(kind)) {
            return cls + "::" + where.getClass().getMethod("getMethodName").invoke(where);
        }
        return cls;
    }

    static String runSelected(String[] args) throws ReflectiveOperationException {
        java.util.List<String> wanted = new java.util.ArrayList<>();
        java.util.Set<String> skipped = new java.util.HashSet<>();
        for (String one : args) {
            if (one.startsWith("!")) {
                skipped.add(one.substring(1));
            } else {
                wanted.add(one);
            }
        }
        Class<?> selectorType = Class.forName("org.junit.platform.engine.DiscoverySelector");
        Class<?> selectors = Class.forName("org.junit.platform.engine.discovery.DiscoverySelectors");
        Object selectorArray = Array.newInstance(selectorType, wanted.size());
        for (int i = 0; i < wanted.size(); i++) {
            String one = wanted.get(i);
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
        Tally tally = launch(selectorArray, skipped);
        return "tests run=" + tally.tests + " failures=" + tally.failures + " errors="
                + tally.errors + " failed=" + String.join(",", tally.failed);
    }

    private static int testDumps;

    /**
     * With {@code -Dcodereval.jacoco.pertest=DIR}: the coverage since the last test, written as
     * {@code DIR/N.exec} with its test's name on line N of {@code DIR/index.tsv}, and reset, so
     * each file holds one test's coverage (CoderUJB's map of which methods each test runs).
     */
    static void dumpTestCoverage(String name) throws ReflectiveOperationException {
        String dir = System.getProperty("codereval.jacoco.pertest");
        if (dir == null) {
            return;
        }
        Object agent = Class.forName("org.jacoco.agent.rt.RT").getMethod("getAgent").invoke(null);
        byte[] data = (byte[]) Class.forName("org.jacoco.agent.rt.IAgent")
                .getMethod("getExecutionData", boolean.class).invoke(agent, true);
        int n = ++testDumps;
        try {
            java.nio.file.Files.write(java.nio.file.Paths.get(dir, n + ".exec"), data);
            java.nio.file.Files.write(java.nio.file.Paths.get(dir, "index.tsv"),
                    (n + "\t" + name + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write per-test coverage to " + dir, e);
        }
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
        return launch(selectorArray, java.util.Collections.emptySet());
    }

    /**
     * Runs what the selectors select but the tests named in {@code skipped} ({@code
     * pkg.Class::method}, or {@code pkg.Class} for all of its tests): Defects4J removes such
     * tests (flaky, looping, failing on the fixed version) from its checkouts, so they must not
     * run at all, which a failure left uncounted would not achieve for a test that never ends.
     */
    static Tally launch(Object selectorArray, java.util.Set<String> skipped)
            throws ReflectiveOperationException {
        ClassLoader loader = RunTest.class.getClassLoader();
        Class<?> builderType =
                Class.forName("org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder");
        Object builder = builderType.getMethod("request").invoke(null);
        builderType.getMethod("selectors", selectorArray.getClass()).invoke(builder, selectorArray);
        if (!skipped.isEmpty()) {
            Class<?> filterType = Class.forName("org.junit.platform.launcher.PostDiscoveryFilter");
            Object filters = Array.newInstance(filterType, 1);
            Array.set(filters, 0, skipFilter(filterType, skipped));
            builderType.getMethod("filters", Class.forName(
                    "[Lorg.junit.platform.engine.Filter;")).invoke(builder, filters);
        }
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

    /** A PostDiscoveryFilter that excludes the tests in {@code skipped} (see launch). */
    static Object skipFilter(Class<?> filterType, java.util.Set<String> skipped)
            throws ReflectiveOperationException {
        Class<?> descriptorType = Class.forName("org.junit.platform.engine.TestDescriptor");
        Method getSource = descriptorType.getMethod("getSource");
        Method includedIf = Class.forName("org.junit.platform.engine.FilterResult")
                .getMethod("includedIf", boolean.class);
        InvocationHandler handler = new InvocationHandler() {
            @Override
            public Object invoke(Object proxy, Method method, Object[] margs) throws Throwable {
                switch (method.getName()) {
                    case "apply":
                        return includedIf.invoke(null, !isSkipped(margs[0]));
                    case "toPredicate":
                        return (java.util.function.Predicate<Object>) d -> !isSkipped(d);
                    case "hashCode":
                        return System.identityHashCode(proxy);
                    case "equals":
                        return proxy == margs[0];
                    case "toString":
                        return "tests left out: " + skipped;
                    default:
                        throw new UnsupportedOperationException(method.getName());
                }
            }

            private boolean isSkipped(Object descriptor) {
                try {
                    String name = sourceName((Optional<?>) getSource.invoke(descriptor));
                    if (name == null) {
                        return false;
                    }
                    int cut = name.indexOf("::");
                    return skipped.contains(name)
                            || (cut >= 0 && skipped.contains(name.substring(0, cut)));
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        return Proxy.newProxyInstance(RunTest.class.getClassLoader(), new Class<?>[] {filterType},
                handler);
    }
}
