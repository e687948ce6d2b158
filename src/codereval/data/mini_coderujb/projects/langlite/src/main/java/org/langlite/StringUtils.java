package org.langlite;

/**
 * Operations on {@link String} that are {@code null} safe.
 */
public final class StringUtils {

    /** The empty String {@code ""}. */
    public static final String EMPTY = "";

    private static final String ELLIPSIS = "...";

    private StringUtils() {
    }

    /**
     * Checks if a CharSequence is empty (""), null or whitespace only.
     *
     * @param cs the CharSequence to check, may be null
     * @return {@code true} if the CharSequence is null, empty or whitespace only
     */
    public static boolean isBlank(CharSequence cs) {
        if (cs == null) {
            return true;
        }
        for (int i = 0; i < cs.length(); i++) {
            if (!Character.isWhitespace(cs.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Abbreviates a String using ellipses: "Now is the time for all good men" becomes
     * "Now is the time for...". A String no longer than {@code maxWidth} is returned as is.
     *
     * @param str the String to check, may be null
     * @param maxWidth maximum length of result String, must be at least 4
     * @return abbreviated String, {@code null} if null String input
     * @throws IllegalArgumentException if the width is too small
     */
    public static String abbreviate(String str, int maxWidth) {
        if (maxWidth < ELLIPSIS.length() + 1) {
            throw new IllegalArgumentException("Minimum abbreviation width is 4");
        }
        if (str == null) {
            return null;
        }
        if (str.length() <= maxWidth) {
            return str;
        }
        return str.substring(0, maxWidth - ELLIPSIS.length()) + ELLIPSIS;
    }

    /**
     * Capitalizes a String changing the first character to title case. No other characters
     * are changed.
     *
     * @param str the String to capitalize, may be null
     * @return the capitalized String, {@code null} if null String input
     */
    public static String capitalize(String str) {
        if (str == null || str.isEmpty()) {
            return str;
        }
        char first = str.charAt(0);
        char title = Character.toTitleCase(first);
        if (first == title) {
            return str;
        }
        return title + str.substring(1);
    }

    /**
     * Repeats a String {@code repeat} times to form a new String, with a separator between.
     *
     * @param str the String to repeat, may be null
     * @param separator the String between repetitions, null is treated as ""
     * @param repeat number of times to repeat str, negative treated as zero
     * @return a new String consisting of the original String repeated, {@code null} if null
     */
    public static String repeat(String str, String separator, int repeat) {
        if (str == null) {
            return null;
        }
        String sep = separator == null ? EMPTY : separator;
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < repeat; i++) {
            if (i > 0) {
                out.append(sep);
            }
            out.append(str);
        }
        return out.toString();
    }
}
