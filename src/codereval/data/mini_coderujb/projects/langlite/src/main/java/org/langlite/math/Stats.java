package org.langlite.math;

/**
 * Summaries of int samples, built on {@link NumberUtils}.
 */
public final class Stats {

    private Stats() {
    }

    /**
     * How far the largest value lies above the first one.
     *
     * @param values the sample, must not be null or empty
     * @return the largest value minus the first
     */
    public static long riseFromFirst(int... values) {
        return NumberUtils.max(values) - values[0];
    }
}
