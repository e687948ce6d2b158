package org.langlite;

/**
 * An immutable range of {@code int} values, both ends inclusive.
 */
public final class IntRange {

    private final int min;
    private final int max;

    /**
     * Creates a range between two numbers, given in either order.
     *
     * @param a one end of the range
     * @param b the other end of the range
     */
    public IntRange(int a, int b) {
        this.min = Math.min(a, b);
        this.max = Math.max(a, b);
    }

    public int getMinimum() {
        return min;
    }

    public int getMaximum() {
        return max;
    }

    /**
     * Tests whether the value is inside this range, both ends inclusive.
     *
     * @param value the value to test
     * @return {@code true} if the value is within the range
     */
    public boolean contains(int value) {
        return value >= min && value <= max;
    }

    /**
     * Tests whether this range overlaps another: they share at least one value. Ranges that
     * touch at an end share that value, so they overlap.
     *
     * @param other the range to test, null returns false
     * @return {@code true} if the ranges share at least one value
     */
    public boolean overlaps(IntRange other) {
        if (other == null) {
            return false;
        }
        return other.min <= max && min <= other.max;
    }

    /**
     * The values both ranges contain.
     *
     * @param other the other range
     * @return the intersection of this range and the other
     * @throws IllegalArgumentException if the ranges do not overlap
     */
    public IntRange intersectionWith(IntRange other) {
        if (!overlaps(other)) {
            throw new IllegalArgumentException("Cannot calculate intersection with non-overlapping range " + other);
        }
        if (equals(other)) {
            return this;
        }
        return new IntRange(Math.max(min, other.min), Math.min(max, other.max));
    }

    /**
     * Clamps a value into this range.
     *
     * @param value the value to clamp
     * @return the value, or the nearest end of the range when it lies outside
     */
    public int fit(int value) {
        if (value < min) {
            return min;
        }
        if (value > max) {
            return max;
        }
        return value;
    }

    @Override
    public boolean equals(Object obj) {
        if (this == obj) {
            return true;
        }
        if (!(obj instanceof IntRange)) {
            return false;
        }
        IntRange range = (IntRange) obj;
        return min == range.min && max == range.max;
    }

    @Override
    public int hashCode() {
        return 31 * min + max;
    }

    @Override
    public String toString() {
        return "[" + min + ".." + max + "]";
    }
}
