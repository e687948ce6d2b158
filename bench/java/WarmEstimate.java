import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a warm test JVM would cost per sample, measured, not built (docs/executors.md, "Java").
 *
 * <p>Runs one test ITERATIONS times inside this JVM, each time from a new class loader over the
 * whole test classpath with the platform loader as parent: the least a warm JVM must do so that
 * no static state of the project, its dependencies or JUnit survives from one sample to the
 * next. With "shared-jars", the classpath's jars are loaded once by a parent loader and only
 * its folders (the sample's and the project's classes) anew: cheaper, and weaker (the static
 * state of JUnit and of every dependency then survives between samples). Prints the median and
 * the best time of the runs after the first five (the JIT warm).
 *
 * <p>Usage: WarmEstimate ITERATIONS main|junit TEST_CLASS CLASSPATH [shared-jars]
 */
public final class WarmEstimate {
    public static void main(String[] args) throws Exception {
        int iterations = Integer.parseInt(args[0]);
        boolean sharedJars = args.length > 4 && "shared-jars".equals(args[4]);
        List<URL> urls = new ArrayList<>();
        List<URL> jars = new ArrayList<>();
        for (String entry : args[3].split(File.pathSeparator)) {
            URL url = new File(entry).toURI().toURL();
            // The harness stays with the sample's classes: it loads the test class through its
            // own loader.
            boolean shared = sharedJars && entry.endsWith(".jar") && !entry.endsWith("harness.jar");
            (shared ? jars : urls).add(url);
        }
        ClassLoader parent = sharedJars
                ? new URLClassLoader(jars.toArray(new URL[0]), ClassLoader.getPlatformClassLoader())
                : ClassLoader.getPlatformClassLoader();
        PrintStream out = System.out;
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        long[] times = new long[iterations];
        for (int i = 0; i < iterations; i++) {
            long start = System.nanoTime();
            try (URLClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), parent)) {
                Thread.currentThread().setContextClassLoader(loader);
                Class<?> harness = loader.loadClass("codereval.harness.RunTest");
                Method run = harness.getDeclaredMethod(
                        "main".equals(args[1]) ? "runMain" : "runJUnit", String.class);
                run.setAccessible(true);
                System.setOut(quiet);
                System.setErr(quiet);
                String status = (String) run.invoke(null, args[2]);
                System.setOut(out);
                if (i == 0) {
                    out.println("status " + status);
                }
            }
            times[i] = System.nanoTime() - start;
        }
        long[] warm = Arrays.copyOfRange(times, Math.min(5, iterations - 1), iterations);
        Arrays.sort(warm);
        out.printf("first_ms %.2f median_ms %.2f best_ms %.2f%n", times[0] / 1e6,
                warm[warm.length / 2] / 1e6, warm[0] / 1e6);
        out.flush();
        Runtime.getRuntime().halt(0);
    }
}
