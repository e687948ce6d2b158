package codereval.service;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;

/**
 * A long-lived compiler: reads compile requests on stdin, answers on stdout.
 *
 * <p>Why a JVM that stays up: a fresh javac process spends most of its time starting and
 * warming up; inside one JVM the compiler classes stay loaded and JIT-compiled, and opened jars
 * stay cached in the file manager.
 *
 * <p>Framing: every field is a line "KEY LENGTH\n" followed by LENGTH bytes of UTF-8. A request is
 * fields OUT (output directory), CP (class path, File.pathSeparator-joined), OPT (one option per
 * line), then pairs SRC (the file's path as javac should print it) + TXT (its text), then "END 0".
 * The answer is "OK 0|1", "DIAG n" with javac's own printed diagnostics, then "END 0".
 */
public final class CompileServer {
    private CompileServer() {}

    /** Source text held in memory, named by the relative path javac prints in diagnostics. */
    static final class MemorySource extends SimpleJavaFileObject {
        private final String name;
        private final String text;

        MemorySource(String name, String text) {
            super(URI.create("string:///" + name.replace('\\', '/')), JavaFileObject.Kind.SOURCE);
            this.name = name;
            this.text = text;
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }
    }

    static final class Request {
        String out = "";
        String classpath = "";
        List<String> options = new ArrayList<>();
        List<MemorySource> sources = new ArrayList<>();
    }

    public static void main(String[] args) throws IOException {
        // The protocol owns stdout: anything else printed (by javac or plugins) goes to stderr.
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false,
                StandardCharsets.UTF_8);
        System.setOut(System.err);
        Locale.setDefault(Locale.ROOT);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            writeAnswer(protocol, false, "no system Java compiler (a JRE, not a JDK?)\n");
            return;
        }
        StandardJavaFileManager files =
                javac.getStandardFileManager(null, Locale.ROOT, StandardCharsets.UTF_8);
        InputStream in = new BufferedInputStream(System.in, 1 << 16);
        while (true) {
            Request request = readRequest(in);
            if (request == null) {
                return;
            }
            StringWriter printed = new StringWriter();
            boolean ok;
            try {
                ok = compile(javac, files, request, new PrintWriter(printed));
            } catch (RuntimeException | IOException | Error e) {
                // A compiler crash is reported like javac reports one, and the service goes on.
                ok = false;
                printed.write("An exception has occurred in the compiler: " + e + "\n");
            }
            writeAnswer(protocol, ok, printed.toString());
        }
    }

    static boolean compile(JavaCompiler javac, StandardJavaFileManager files, Request request,
            PrintWriter printed) throws IOException {
        File out = new File(request.out);
        if (!out.isDirectory() && !out.mkdirs()) {
            throw new IOException("cannot create output directory " + out);
        }
        List<File> classpath = new ArrayList<>();
        for (String entry : request.classpath.split(File.pathSeparator)) {
            if (!entry.isEmpty()) {
                classpath.add(new File(entry));
            }
        }
        files.setLocation(StandardLocation.CLASS_OUTPUT, List.of(out));
        files.setLocation(StandardLocation.CLASS_PATH, classpath);
        // Like javac without -sourcepath: sources found on the class path, none elsewhere.
        files.setLocation(StandardLocation.SOURCE_PATH, null);
        JavaCompiler.CompilationTask task =
                javac.getTask(printed, files, null, request.options, null, request.sources);
        boolean ok = task.call();
        printed.flush();
        return ok;
    }

    static Request readRequest(InputStream in) throws IOException {
        Request request = new Request();
        String pendingName = null;
        while (true) {
            String header = readLine(in);
            if (header == null) {
                return null;
            }
            int space = header.indexOf(' ');
            if (space < 0) {
                throw new IOException("bad frame header: " + header);
            }
            String key = header.substring(0, space);
            int length = Integer.parseInt(header.substring(space + 1).trim());
            String value = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            switch (key) {
                case "OUT": request.out = value; break;
                case "CP": request.classpath = value; break;
                case "OPT":
                    for (String option : value.split("\n")) {
                        if (!option.isEmpty()) {
                            request.options.add(option);
                        }
                    }
                    break;
                case "SRC": pendingName = value; break;
                case "TXT":
                    if (pendingName == null) {
                        throw new IOException("TXT without SRC");
                    }
                    request.sources.add(new MemorySource(pendingName, value));
                    pendingName = null;
                    break;
                case "END": return request;
                default: throw new IOException("unknown frame " + key);
            }
        }
    }

    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                return line.size() == 0 ? null : line.toString(StandardCharsets.UTF_8);
            }
            if (b == '\n') {
                return line.toString(StandardCharsets.UTF_8);
            }
            line.write(b);
        }
    }

    static void writeAnswer(PrintStream protocol, boolean ok, String diagnostics) {
        byte[] diag = diagnostics.getBytes(StandardCharsets.UTF_8);
        writeField(protocol, "OK", (ok ? "1" : "0").getBytes(StandardCharsets.UTF_8));
        writeField(protocol, "DIAG", diag);
        writeField(protocol, "END", new byte[0]);
        protocol.flush();
    }

    static void writeField(OutputStream out, String key, byte[] value) {
        try {
            out.write((key + " " + value.length + "\n").getBytes(StandardCharsets.UTF_8));
            out.write(value);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
