package io.textkit;

/**
 * Integer arithmetic helpers.
 */
public final class MathUtil {

    private MathUtil() {
    }

    /**
     * Computes the greatest common divisor of two numbers; the result is never negative.
     * @param a the first number
     * @param b the second number
     * @return the greatest common divisor of a and b, 0 when both are 0
     */
    public static long gcd(long a, long b) {
        a = Math.abs(a);
        b = Math.abs(b);
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }
}
