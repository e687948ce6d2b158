package io.textkit;

import java.util.Arrays;
import java.util.List;

public class Texts_abbreviateAll {
    public static void main(String[] args) {
        List<String> out = Texts.abbreviateAll(Arrays.asList("abcdefghij", "abc", ""), 6);
        System.out.println(out.equals(Arrays.asList("abc...", "abc", "")));
        System.out.println(Texts.abbreviateAll(null, 6).isEmpty());
        List<String> withNull = Texts.abbreviateAll(Arrays.asList((String) null), 5);
        System.out.println(withNull.size() == 1 && withNull.get(0) == null);
    }
}
