package io.textkit;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.commons.lang3.StringUtils;

/**
 * Small text helpers.
 */
public final class Texts {

    private Texts() {
    }

    /**
     * Reverses the order of the words in a sentence; words are separated by single spaces.
     * @param text the sentence, may be null
     * @return the words in reverse order joined by single spaces, or null for null
     */
    public static String reverseWords(String text) {
        if (text == null) {
            return null;
        }
        String[] words = text.trim().split(" +");
        StringBuilder out = new StringBuilder();
        for (int i = words.length - 1; i >= 0; i--) {
            out.append(words[i]);
            if (i > 0) {
                out.append(' ');
            }
        }
        return out.toString();
    }

    /**
     * Counts how often each lower-cased word occurs, words being runs of letters and digits.
     * @param text the text to count in, may be null
     * @return a map sorted by word from word to its number of occurrences
     */
    public static Map<String, Integer> countWords(String text) {
        Map<String, Integer> counts = new TreeMap<>();
        if (text == null) {
            return counts;
        }
        for (String word : text.toLowerCase().split("[^\\p{Alnum}]+")) {
            if (!word.isEmpty()) {
                counts.merge(word, 1, Integer::sum);
            }
        }
        return counts;
    }

    /**
     * Joins the distinct items in natural order with the given separator.
     * @param items the items to join, may be null
     * @param separator the text placed between two items
     * @return the sorted distinct items joined, or the empty string for null or no items
     */
    public static String joinSorted(Collection<String> items, String separator) {
        if (items == null || items.isEmpty()) {
            return "";
        }
        return String.join(separator, new java.util.TreeSet<>(items));
    }

    /**
     * Abbreviates every item to at most maxWidth characters using "..." for the cut part.
     * @param items the items, may be null
     * @param maxWidth the largest width of an abbreviated item, at least 4
     * @return a new list of abbreviated items (empty for null)
     */
    public static List<String> abbreviateAll(List<String> items, int maxWidth) {
        List<String> out = new ArrayList<>();
        if (items == null) {
            return out;
        }
        for (String item : items) {
            out.add(StringUtils.abbreviate(item, maxWidth));
        }
        return out;
    }

    /**
     * Returns the upper-cased first letter of every whitespace-separated word.
     * @param text the text, may be null or blank
     * @return the initials, or the empty string when the text is null or blank
     */
    public static String initials(String text) {
        if (StringUtils.isBlank(text)) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        for (String word : StringUtils.split(text)) {
            out.append(Character.toUpperCase(word.charAt(0)));
        }
        return out.toString();
    }

    /**
     * Pads the text on the right with spaces to the given width; longer text is returned as is.
     * @param text the text
     * @param width the width to pad to
     * @return the padded text
     */
    public static String padRight(String text, int width) {
        return StringUtils.rightPad(text, width);
    }
}
