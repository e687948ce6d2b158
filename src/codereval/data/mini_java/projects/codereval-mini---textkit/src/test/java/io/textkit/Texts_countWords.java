package io.textkit;

import java.util.Map;

public class Texts_countWords {
    public static void main(String[] args) {
        Map<String, Integer> counts = Texts.countWords("The cat and THE hat, the end.");
        System.out.println(counts.get("the") == 3);
        System.out.println(counts.get("cat") == 1);
        System.out.println(counts.size() == 5);
        System.out.println("and".equals(counts.keySet().iterator().next()));
        System.out.println(Texts.countWords(null).isEmpty());
        System.out.println(Texts.countWords("  ,, ").isEmpty());
    }
}
