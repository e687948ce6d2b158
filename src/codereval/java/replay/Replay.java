package codereval.replay;

import java.io.IOException;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import com.thoughtworks.xstream.XStream;

/**
 * The library a test recorded by {@code codereval build java-tests} runs on: it rebuilds each
 * recorded call's receiver and arguments (XStream XML), calls the method of the build under
 * test, and compares what it does with what the original did: the exception's class, or the
 * value returned, then the receiver and the arguments after the call.
 *
 * <p>Prints {@code true} when every call behaves as recorded, else {@code false} and, on
 * stderr, the first call that did not (the form of CoderEval's own tests). With the system
 * property {@code codereval.replay.calibrate=FILE} it also writes the indexes of the calls that
 * did not, one per line, with the reason (how {@code build} finds what the reference itself does
 * not reproduce).
 */
public final class Replay {
    private Replay() {}

    private static final int SHOWN = 300;

    private static XStream xstream() {
        return XStreams.create(Thread.currentThread().getContextClassLoader());
    }

    /**
     * Replays {@code calls}: each {OUTCOME, BEFORE, VALUE, AFTER} as the recorder wrote them
     * (OUTCOME {@code return}, {@code void} or {@code throw}; VALUE the returned value's XML or
     * the thrown class's name).
     */
    public static void check(String className, String name, String descriptor, String[][] calls)
            throws Exception {
        XStream xstream = xstream();
        Class<?> owner = Class.forName(className);
        Method method = find(owner, name, descriptor);
        List<String> failed = new ArrayList<>();
        String first = null;
        if (method == null) {
            first = "no method " + name + descriptor + " in " + className;
            failed.add("-1\t" + first);
        } else {
            method.setAccessible(true);
            for (int i = 0; i < calls.length; i++) {
                String problem;
                try {
                    problem = replay(xstream, method, calls[i]);
                } catch (Throwable e) {
                    problem = "replaying it failed: " + e;
                }
                if (problem != null) {
                    problem = problem.replace('\n', ' ');
                    failed.add(i + "\t" + problem);
                    if (first == null) {
                        first = "recorded call " + (i + 1) + " of " + calls.length + ": " + problem;
                    }
                }
            }
        }
        String calibrate = System.getProperty("codereval.replay.calibrate");
        if (calibrate != null) {
            write(calibrate, failed);
        }
        if (first != null) {
            System.err.println(first);
        }
        System.out.println(first == null ? "true" : "false");
    }

    private static void write(String path, List<String> lines) throws IOException {
        Files.write(Paths.get(path), lines, StandardCharsets.UTF_8);
    }

    static Method find(Class<?> owner, String name, String descriptor) {
        for (Method method : owner.getDeclaredMethods()) {
            if (method.getName().equals(name) && descriptor(method).equals(descriptor)) {
                return method;
            }
        }
        return null;
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
        if (type.isPrimitive()) {
            return String.valueOf(primitive(type));
        }
        return "L" + type.getName().replace('.', '/') + ";";
    }

    private static char primitive(Class<?> type) {
        if (type == void.class) return 'V';
        if (type == boolean.class) return 'Z';
        if (type == byte.class) return 'B';
        if (type == char.class) return 'C';
        if (type == short.class) return 'S';
        if (type == int.class) return 'I';
        if (type == long.class) return 'J';
        if (type == float.class) return 'F';
        return 'D';
    }

    private static String replay(XStream xstream, Method method, String[] call) throws Exception {
        String outcome = call[0];
        Object[] input = (Object[]) xstream.fromXML(call[1]);
        Object self = input[0];
        Object[] arguments = (Object[]) input[1];
        Object value = null;
        Throwable thrown = null;
        try {
            value = method.invoke(self, arguments);
        } catch (InvocationTargetException e) {
            thrown = e.getCause();
        }
        if (thrown != null) {
            if (!outcome.equals("throw")) {
                return "threw " + show(thrown);
            }
            if (!thrown.getClass().getName().equals(call[2])) {
                return "threw " + thrown.getClass().getName() + ", expected " + call[2];
            }
        } else if (outcome.equals("throw")) {
            return "returned " + show(value) + ", expected " + call[2] + " to be thrown";
        } else if (outcome.equals("return")) {
            Object expected = xstream.fromXML(call[2]);
            if (!same(xstream, expected, value, 0) && !Structure.equal(expected, value)) {
                return "returned " + show(value) + ", expected " + show(expected);
            }
        }
        String after = xstream.toXML(new Object[] {self, arguments});
        if (!after.equals(call[3]) && !sameAfter(xstream, call[3], after, self, arguments)) {
            return self != null && !xstream.toXML(self).equals(receiverOf(xstream, call[3]))
                ? "left its receiver other than the original did"
                : "left its arguments other than the original did";
        }
        return null;
    }

    /**
     * Whether the state after a call, whose XML ({@code after}) differs from the recording's,
     * is the recorded one all the same: against the recording rebuilt once as the inputs were
     * (a class whose readObject fills a field, log4j's LoggingEvent and its location, writes it
     * back), or, last, as a graph, hash-ordered sets and maps in any order (Structure).
     */
    private static boolean sameAfter(XStream xstream, String recording, String after,
                                     Object self, Object[] arguments) {
        Object recorded = xstream.fromXML(recording);
        String rebuilt;
        try {
            rebuilt = xstream.toXML(recorded);
        } catch (RuntimeException e) {
            rebuilt = recording;
        }
        return after.equals(rebuilt) || Structure.equal(recorded, new Object[] {self, arguments});
    }

    private static String receiverOf(XStream xstream, String after) {
        return xstream.toXML(((Object[]) xstream.fromXML(after))[0]);
    }

    /**
     * Equal as the recording saw it: numbers within a relative 1e-9 (NaN equals NaN), arrays
     * item by item, objects with their own {@code equals} by it, any other object by its XML.
     */
    static boolean same(XStream xstream, Object expected, Object actual, int depth) {
        if (expected == actual) {
            return true;
        }
        if (expected == null || actual == null || depth > 50) {
            return false;
        }
        if ((expected instanceof Double || expected instanceof Float)
                && (actual instanceof Double || actual instanceof Float)) {
            return Structure.close(((Number) expected).doubleValue(),
                ((Number) actual).doubleValue());
        }
        if (expected.getClass().isArray()) {
            if (!actual.getClass().isArray() || Array.getLength(expected) != Array.getLength(actual)
                    || expected.getClass() != actual.getClass()) {
                return false;
            }
            for (int i = 0; i < Array.getLength(expected); i++) {
                if (!same(xstream, Array.get(expected, i), Array.get(actual, i), depth + 1)) {
                    return false;
                }
            }
            return true;
        }
        if (ownEquals(expected.getClass())) {
            try {
                return expected.equals(actual);
            } catch (RuntimeException e) {
                return false;
            }
        }
        return expected.getClass() == actual.getClass()
            && xstream.toXML(expected).equals(xstream.toXML(actual));
    }

    private static boolean ownEquals(Class<?> type) {
        try {
            return type.getMethod("equals", Object.class).getDeclaringClass() != Object.class;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    private static String show(Object value) {
        String text;
        try {
            text = value == null ? "null"
                : value.getClass().isArray() ? value.getClass().getSimpleName() + " of "
                    + Array.getLength(value)
                : String.valueOf(value);
        } catch (RuntimeException e) {
            text = value.getClass().getName();
        }
        return text.length() > SHOWN ? text.substring(0, SHOWN) + "..." : text;
    }

    /** Joins a long text the generated test holds in pieces (a class file's constants are at
     * most 65,535 bytes). */
    public static String join(String... pieces) {
        return String.join("", pieces);
    }
}
