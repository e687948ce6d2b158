package io.textkit;

public class Texts_reverseWords {
    public static void main(String[] args) {
        System.out.println("c b a".equals(Texts.reverseWords("a b c")));
        System.out.println("world hello".equals(Texts.reverseWords("  hello   world ")));
        System.out.println("one".equals(Texts.reverseWords("one")));
        System.out.println(Texts.reverseWords(null) == null);
    }
}
