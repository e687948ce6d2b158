package org.langlite.math;

/**
 * Operations on numbers and on Strings that hold numbers.
 */
public final class NumberUtils {

    private NumberUtils() {
    }

    /**
     * Converts a String to an int, returning a default value if the conversion fails.
     *
     * @param str the String to convert, may be null
     * @param defaultValue the default value
     * @return the int represented by the String, or the default if conversion fails
     */
    public static int toInt(String str, int defaultValue) {
        if (str == null) {
            return defaultValue;
        }
        try {
            return Integer.parseInt(str.trim());
        } catch (NumberFormatException e) {
            return defaultValue;
        }
    }

    /**
     * Checks whether the String contains only digit characters. Null and empty String
     * return false.
     *
     * @param str the String to check
     * @return {@code true} if str contains only Unicode numeric digits
     */
    public static boolean isDigits(String str) {
        if (str == null || str.isEmpty()) {
            return false;
        }
        for (int i = 0; i < str.length(); i++) {
            if (!Character.isDigit(str.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Returns the maximum value in an array.
     *
     * @param array an array, must not be null or empty
     * @return the maximum value in the array
     * @throws IllegalArgumentException if the array is null or empty
     */
    public static int max(int... array) {
        if (array == null || array.length == 0) {
            throw new IllegalArgumentException("Array cannot be null or empty.");
        }
        int max = array[0];
        for (int i = 1; i < array.length; i++) {
            if (array[i] > max) {
                max = array[i];
            }
        }
        return max;
    }
}
