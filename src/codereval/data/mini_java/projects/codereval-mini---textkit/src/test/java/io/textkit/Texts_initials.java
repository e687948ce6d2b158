package io.textkit;

public class Texts_initials {
    public static void main(String[] args) {
        System.out.println("GvR".equalsIgnoreCase(Texts.initials("guido van rossum")));
        System.out.println("GVR".equals(Texts.initials("guido van rossum")));
        System.out.println("AB".equals(Texts.initials("  ada\tbyron ")));
        System.out.println("".equals(Texts.initials("   ")));
        System.out.println("".equals(Texts.initials(null)));
    }
}
