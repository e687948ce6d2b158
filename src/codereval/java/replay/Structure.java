package codereval.replay;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;

/**
 * Two object graphs equal in what they hold: the same classes, the same primitive values and
 * texts, item by item — and a hash-ordered {@link Set} or {@link Map} of the JDK compared as a
 * set, whatever order it iterates in. A graph rebuilt from XML puts objects hashed by identity
 * into its hash tables in a new order on every run (jgrapht's graphs), so its XML differs from
 * the recording's even when the call did just what the original did.
 *
 * <p>Fields are compared as XStream writes them: every non-static, non-transient field, up the
 * class hierarchy. Cycles and shared objects are followed once (a pair under comparison is
 * taken as equal while it is). The work is bounded: past {@link #BUDGET} steps the graphs are
 * reported unequal, which makes a call that cannot be checked a call that does not reproduce.
 */
final class Structure {
    private static final double TOLERANCE = 1e-9;
    static final long BUDGET = 2_000_000;

    private final Set<Pair> assumed = new HashSet<>();
    private long steps;

    private Structure() {}

    /** Whether {@code expected} and {@code actual} hold the same, as described above. */
    static boolean equal(Object expected, Object actual) {
        try {
            return new Structure().same(expected, actual);
        } catch (RuntimeException | StackOverflowError e) {
            // Exhausted (past the budget), or a graph whose own methods throw: not the same.
            return false;
        }
    }

    private static final class Exhausted extends RuntimeException {
        Exhausted() {
            super(null, null, false, false);
        }
    }

    /** Two objects by identity, for the pairs under comparison. */
    private static final class Pair {
        private final Object a;
        private final Object b;

        Pair(Object a, Object b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Pair && ((Pair) other).a == a && ((Pair) other).b == b;
        }

        @Override
        public int hashCode() {
            return 31 * System.identityHashCode(a) + System.identityHashCode(b);
        }
    }

    private boolean same(Object a, Object b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null) {
            return false;
        }
        if (++steps > BUDGET) {
            throw new Exhausted();
        }
        Class<?> type = a.getClass();
        if (type != b.getClass()) {
            return false;
        }
        if (a instanceof Double || a instanceof Float) {
            return close(((Number) a).doubleValue(), ((Number) b).doubleValue());
        }
        if (leaf(type)) {
            return a.equals(b);
        }
        Pair pair = new Pair(a, b);
        if (!assumed.add(pair)) {
            return true;
        }
        boolean result = compare(type, a, b);
        if (!result) {
            assumed.remove(pair);
        }
        return result;
    }

    /** Equal doubles and floats, as a recording can hold them: within a relative 1e-9, NaN
     * equal to NaN (Replay's comparison of returned values uses it too). */
    static boolean close(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b)) {
            return Double.isNaN(a) && Double.isNaN(b);
        }
        return a == b || Math.abs(a - b) <= TOLERANCE * Math.max(1.0, Math.max(Math.abs(a), Math.abs(b)));
    }

    private static boolean leaf(Class<?> type) {
        return type == String.class || type == Integer.class || type == Long.class
            || type == Short.class || type == Byte.class || type == Character.class
            || type == Boolean.class || type == BigInteger.class || type == BigDecimal.class
            || type == Class.class || type.isEnum()
            || (type.getSuperclass() != null && type.getSuperclass().isEnum());
    }

    private boolean compare(Class<?> type, Object a, Object b) {
        if (type.isArray()) {
            int length = Array.getLength(a);
            if (length != Array.getLength(b)) {
                return false;
            }
            for (int i = 0; i < length; i++) {
                if (!same(Array.get(a, i), Array.get(b, i))) {
                    return false;
                }
            }
            return true;
        }
        boolean jdk = type.getName().startsWith("java.");
        if (jdk && a instanceof Map) {
            return maps((Map<?, ?>) a, (Map<?, ?>) b);
        }
        if (jdk && a instanceof Collection) {
            return collections((Collection<?>) a, (Collection<?>) b);
        }
        return fields(type, a, b);
    }

    /** Iteration order is the content's own for lists, queues, sorted and linked collections;
     * for the others (HashSet, HashMap, their wrappers) it is the hash table's. */
    private static boolean ordered(Object collection) {
        return collection instanceof List || collection instanceof Queue
            || collection instanceof SortedSet || collection instanceof SortedMap
            || collection instanceof LinkedHashSet || collection instanceof LinkedHashMap;
    }

    private boolean collections(Collection<?> a, Collection<?> b) {
        if (a.size() != b.size()) {
            return false;
        }
        if (ordered(a)) {
            java.util.Iterator<?> other = b.iterator();
            for (Object item : a) {
                if (!other.hasNext() || !same(item, other.next())) {
                    return false;
                }
            }
            return !other.hasNext();
        }
        return matched(new ArrayList<>(a), new ArrayList<>(b));
    }

    private boolean maps(Map<?, ?> a, Map<?, ?> b) {
        if (a.size() != b.size()) {
            return false;
        }
        List<Object> left = new ArrayList<>();
        List<Object> right = new ArrayList<>();
        for (Map.Entry<?, ?> entry : a.entrySet()) {
            left.add(new Object[] {entry.getKey(), entry.getValue()});
        }
        for (Map.Entry<?, ?> entry : b.entrySet()) {
            right.add(new Object[] {entry.getKey(), entry.getValue()});
        }
        if (ordered(a)) {
            for (int i = 0; i < left.size(); i++) {
                if (!same(left.get(i), right.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return matched(left, right);
    }

    /** Every item of {@code left} has its own equal in {@code right} (sizes are equal). */
    private boolean matched(List<Object> left, List<Object> right) {
        boolean[] used = new boolean[right.size()];
        for (int i = 0; i < left.size(); i++) {
            Object item = left.get(i);
            boolean found = false;
            // The same place first: a set of texts or numbers iterates alike every run.
            for (int k = 0; k < right.size() && !found; k++) {
                int j = (i + k) % right.size();
                if (!used[j] && same(item, right.get(j))) {
                    used[j] = true;
                    found = true;
                }
            }
            if (!found) {
                return false;
            }
        }
        return true;
    }

    private boolean fields(Class<?> type, Object a, Object b) {
        for (Class<?> level = type; level != null && level != Object.class;
                level = level.getSuperclass()) {
            for (Field field : level.getDeclaredFields()) {
                int modifiers = field.getModifiers();
                if (Modifier.isStatic(modifiers) || Modifier.isTransient(modifiers)) {
                    continue;
                }
                Object x;
                Object y;
                try {
                    field.setAccessible(true);
                    x = field.get(a);
                    y = field.get(b);
                } catch (RuntimeException | IllegalAccessException e) {
                    // A field this JVM does not open cannot be checked: not the same, then.
                    return false;
                }
                if (!same(x, y)) {
                    return false;
                }
            }
        }
        return true;
    }
}
