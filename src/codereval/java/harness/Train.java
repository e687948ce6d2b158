package codereval.harness;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Paths;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The training run of a class-data sharing archive (codereval.java.cds): run under
 * -XX:ArchiveClassesAtExit, it loads what a test JVM of this classpath will load, so the archive
 * holds it.
 *
 * <p>It loads, without initialising (no static initialiser of the project's dependencies runs),
 * the classes of every jar on the classpath up to a cap, in classpath order; then, given a folder
 * of compiled training tests, it runs them through the harness's own JUnit path (RunTest), so the
 * launcher, its engines and the listener proxy are archived as a sample's run uses them. The
 * training tests come from a class loader of their own: only the classpath's jars may be on the
 * dump-time classpath (a JVM refuses to archive with a non-empty folder on it), and a sample's
 * JVM must start with the dump-time classpath as its prefix.
 *
 * <p>Usage: Train MAX_CLASSES [TRAINING_CLASSES_DIR TEST_CLASS...]
 */
public final class Train {
    private Train() {}

    public static void main(String[] args) throws Exception {
        int cap = Integer.parseInt(args[0]);
        PrintStream out = System.out;
        int loaded = 0;
        int failed = 0;
        ClassLoader app = Train.class.getClassLoader();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.endsWith(".jar") || loaded >= cap) {
                continue;
            }
            try (JarFile jar = new JarFile(entry)) {
                for (Enumeration<JarEntry> it = jar.entries(); it.hasMoreElements() && loaded < cap;) {
                    String name = it.nextElement().getName();
                    if (!name.endsWith(".class") || name.startsWith("META-INF/")
                            || name.endsWith("module-info.class")
                            || name.endsWith("package-info.class")) {
                        continue;
                    }
                    String binary = name.substring(0, name.length() - 6).replace('/', '.');
                    try {
                        Class.forName(binary, false, app);
                        loaded++;
                    } catch (Throwable e) {
                        // Optional dependencies missing, or a class this JVM cannot load: the
                        // sample's JVM would fail the same way, nothing to archive.
                        failed++;
                    }
                }
            } catch (IOException e) {
                failed++;
            }
        }
        int tests = 0;
        if (args.length > 2) {
            URLClassLoader training = new URLClassLoader(
                    new URL[] {Paths.get(args[1]).toUri().toURL()}, app);
            Thread.currentThread().setContextClassLoader(training);
            // The training tests fail on purpose too (as many samples do): their reports are
            // not wanted, their code paths are.
            PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
            System.setOut(quiet);
            System.setErr(quiet);
            for (int i = 2; i < args.length; i++) {
                RunTest.runJUnit(args[i]);
                tests++;
            }
        }
        out.println("codereval-cds-training loaded=" + loaded + " failed=" + failed
                + " junit-classes=" + tests);
        out.flush();
        // As the harness ends a sample's JVM; the archive is written on the way out.
        Runtime.getRuntime().halt(0);
    }
}
