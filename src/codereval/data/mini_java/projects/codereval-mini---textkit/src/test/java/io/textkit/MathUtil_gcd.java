package io.textkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class MathUtil_gcd {
    @Test
    void commonCases() {
        assertEquals(6, MathUtil.gcd(54, 24));
        assertEquals(1, MathUtil.gcd(17, 5));
    }

    @Test
    void signsAndZero() {
        assertEquals(4, MathUtil.gcd(-8, 12));
        assertEquals(7, MathUtil.gcd(0, -7));
        assertEquals(0, MathUtil.gcd(0, 0));
    }
}
