package codereval.recorder;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.thoughtworks.xstream.XStream;

import codereval.replay.XStreams;

/**
 * What the advice calls: serialises each recorded call with XStream and appends it, one line,
 * to the output file (flushed at once, so a test JVM that is killed keeps what it recorded).
 *
 * <p>Output lines, tab-separated, the texts in base64: {@code call ID SIGNATURE BEFORE OUTCOME
 * VALUE AFTER} where BEFORE and AFTER are the XML of {@code Object[]{receiver, arguments}} (one
 * graph, so an argument that is the receiver stays the receiver), OUTCOME is {@code return},
 * {@code void} or {@code throw}, and VALUE the XML of the value returned or the thrown class's
 * name; {@code drop ID REASON} for the first calls that could not be recorded; and at exit
 * {@code count ID RECORDED DROPPED}.
 *
 * <p>XStream, because it writes any object graph (no Serializable, no bean properties, no
 * no-argument constructor needed; shared references and cycles kept) as text a person can read
 * and a generated test can hold. A call is recorded once per distinct input; only the
 * outermost call of a recursion is recorded; a call whose input or result does not serialise
 * (a lambda, a thread, a class Java 17 keeps closed) or is larger than MAX_CHARS is dropped, and
 * a method stops being tried after ten times its share of calls.
 */
public final class Recorder {
    private Recorder() {}

    static final int MAX_CHARS = 100_000;
    static final int MAX_REASONS = 20;

    /** One task's method, as the configuration names it. */
    static final class Target {
        final String id;
        final String className;
        final String method;
        final String[] types;
        /** Constants of the method's own source (texts, characters, integers), for Generate. */
        final List<String> texts = new ArrayList<>();
        final List<Character> chars = new ArrayList<>();
        final List<Long> numbers = new ArrayList<>();
        final ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);
        final Set<String> seen = ConcurrentHashMap.newKeySet();
        volatile int recorded;
        volatile int tried;
        volatile int dropped;

        Target(String id, String className, String method, String[] types) {
            this.id = id;
            this.className = className;
            this.method = method;
            this.types = types;
        }
    }

    static final class Config {
        Path out;
        int max = 20;
        /** Generate's inputs include empty values, negatives and calls that throw. */
        boolean edges;
        /** The folders of the project's own classes (Generate looks for subclasses there). */
        final List<Path> classes = new ArrayList<>();
        final List<Target> targets = new ArrayList<>();

        static Config read(Path path) throws IOException {
            Config config = new Config();
            for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
                String[] parts = line.split("\t", -1);
                if (parts[0].equals("out")) {
                    config.out = Path.of(parts[1]);
                } else if (parts[0].equals("max")) {
                    config.max = Integer.parseInt(parts[1]);
                } else if (parts[0].equals("classes")) {
                    config.classes.add(Path.of(parts[1]));
                } else if (parts[0].equals("edges")) {
                    config.edges = Boolean.parseBoolean(parts[1]);
                } else if (parts[0].equals("seed") && parts.length == 4) {
                    String value = new String(Base64.getDecoder().decode(parts[3]),
                        StandardCharsets.UTF_8);
                    for (Target target : config.targets) {
                        if (!target.id.equals(parts[1])) {
                            continue;
                        }
                        if (parts[2].equals("text")) {
                            target.texts.add(value);
                        } else if (parts[2].equals("char") && value.length() == 1) {
                            target.chars.add(value.charAt(0));
                        } else if (parts[2].equals("number")) {
                            target.numbers.add(Long.parseLong(value));
                        }
                    }
                } else if (parts[0].equals("target") && parts.length == 5) {
                    String[] types = parts[4].isEmpty() ? new String[0] : parts[4].split(",");
                    config.targets.add(new Target(parts[1], parts[2], parts[3], types));
                }
            }
            if (config.out == null) {
                throw new IOException("no 'out' line");
            }
            return config;
        }
    }

    /** A call being recorded: what enter saw, for exit. */
    static final class Call {
        final Target target;
        final String signature;
        final Object self;
        final Object[] arguments;
        final String before;

        Call(Target target, String signature, Object self, Object[] arguments, String before) {
            this.target = target;
            this.signature = signature;
            this.self = self;
            this.arguments = arguments;
            this.before = before;
        }
    }

    private static final Map<String, Target> BY_SIGNATURE = new ConcurrentHashMap<>();
    private static final ThreadLocal<Boolean> BUSY = new ThreadLocal<>();
    private static final Object LOCK = new Object();
    private static volatile Config config;
    private static BufferedWriter writer;
    private static XStream xstream;

    static void start(Config given) {
        config = given;
        Runtime.getRuntime().addShutdownHook(new Thread(Recorder::counts, "codereval-recorder"));
    }

    static void register(String signature, Target target) {
        BY_SIGNATURE.put(signature, target);
    }

    private static XStream xstream() {
        synchronized (LOCK) {
            if (xstream == null) {
                xstream = XStreams.create(null);
            }
            return xstream;
        }
    }

    public static Object enter(String signature, Object self, Object[] arguments) {
        Target target = BY_SIGNATURE.get(signature);
        if (target == null || BUSY.get() != null) {
            return null;
        }
        int[] depth = target.depth.get();
        if (depth[0] > 0 || target.recorded >= config.max || target.tried >= 10 * config.max) {
            return null;
        }
        depth[0] = 1;
        BUSY.set(Boolean.TRUE);
        try {
            target.tried++;
            String before = toXml(new Object[] {self, arguments});
            if (before == null) {
                drop(target, "the receiver or an argument does not serialise: " + lastError.get());
                return new Call(target, signature, null, null, null);
            }
            if (!target.seen.add(before.length() + ":" + before.hashCode())) {
                return new Call(target, signature, null, null, null);
            }
            return new Call(target, signature, self, arguments, before);
        } finally {
            BUSY.remove();
        }
    }

    public static void exit(Object token, Object value, Throwable thrown) {
        Call call = (Call) token;
        call.target.depth.get()[0] = 0;
        if (call.before == null || BUSY.get() != null) {
            return;
        }
        BUSY.set(Boolean.TRUE);
        try {
            writeCall(call.target, call.signature, call.before, call.self, call.arguments, value,
                thrown);
        } finally {
            BUSY.remove();
        }
    }

    /** Serialises what the call left and writes it; false when it could not be recorded. */
    static boolean writeCall(Target target, String signature, String before, Object self,
                             Object[] arguments, Object value, Throwable thrown) {
        String[] fields = serialise(target, signature, before, self, arguments, value, thrown);
        return fields != null && emit(target, fields);
    }

    /**
     * A call as written: {signature, before, outcome, result, after}; null when what it left
     * does not serialise (the reason dropped for the target).
     */
    static String[] serialise(Target target, String signature, String before, Object self,
                              Object[] arguments, Object value, Throwable thrown) {
        String outcome;
        String result;
        if (thrown != null) {
            outcome = "throw";
            result = thrown.getClass().getName();
        } else if (signature.endsWith(")V")) {
            outcome = "void";
            result = "";
        } else {
            outcome = "return";
            result = toXml(value);
            if (result == null) {
                drop(target, "the value returned does not serialise: " + lastError.get());
                return null;
            }
        }
        String after = toXml(new Object[] {self, arguments});
        if (after == null) {
            drop(target, "the receiver or an argument after the call does not serialise: "
                + lastError.get());
            return null;
        }
        return new String[] {signature, before, outcome, result, after};
    }

    /** Writes a serialised call; false past the target's limit. */
    static boolean emit(Target target, String[] fields) {
        synchronized (LOCK) {
            if (target.recorded >= config.max) {
                return false;
            }
            target.recorded++;
            write("call", target.id, b64(fields[0]), b64(fields[1]), fields[2], b64(fields[3]),
                b64(fields[4]));
            return true;
        }
    }

    /** The XML of a value, or null when it does not serialise (see lastError). */
    static String xml(Object value) {
        return toXml(value);
    }

    static void dropFor(Target target, String reason) {
        drop(target, reason);
    }

    private static final ThreadLocal<String> lastError = new ThreadLocal<>();

    /** Why this thread's last value did not serialise. */
    static String lastError() {
        return lastError.get();
    }

    /** Thrown by Limited once the XML passes MAX_CHARS: a large graph is not written out. */
    private static final class TooLarge extends RuntimeException {
        TooLarge() {
            super("over " + MAX_CHARS + " characters of XML", null, false, false);
        }
    }

    /** A writer that stops at MAX_CHARS, so a huge receiver costs little to refuse. */
    private static final class Limited extends java.io.Writer {
        private final StringBuilder text = new StringBuilder();

        @Override
        public void write(char[] chars, int offset, int length) {
            if (text.length() + length > MAX_CHARS) {
                throw new TooLarge();
            }
            text.append(chars, offset, length);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    private static String toXml(Object value) {
        try {
            Limited out = new Limited();
            xstream().toXML(value, out);
            return out.text.toString();
        } catch (Throwable e) {
            for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                if (cause instanceof TooLarge) {
                    lastError.set(cause.getMessage());
                    return null;
                }
            }
            String message = String.valueOf(e.getMessage()).split("\n", 2)[0];
            lastError.set(e.getClass().getName() + ": " + message);
            return null;
        }
    }

    private static void drop(Target target, String reason) {
        synchronized (LOCK) {
            target.dropped++;
            if (target.dropped <= MAX_REASONS) {
                write("drop", target.id, b64(reason.length() > 300 ? reason.substring(0, 300) : reason));
            }
        }
    }

    static void counts() {
        synchronized (LOCK) {
            for (Target target : config.targets) {
                write("count", target.id, Integer.toString(target.recorded),
                    Integer.toString(target.dropped));
            }
        }
    }

    private static String b64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static void write(String... fields) {
        try {
            if (writer == null) {
                writer = new BufferedWriter(new OutputStreamWriter(Files.newOutputStream(config.out,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND), StandardCharsets.UTF_8));
            }
            writer.write(String.join("\t", fields));
            writer.write('\n');
            writer.flush();
        } catch (IOException e) {
            System.err.println("codereval recorder: cannot write " + config.out + ": " + e);
        }
    }
}
