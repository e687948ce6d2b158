package org.langlite.math;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class NumberUtilsTest {

    @Test
    public void testIsDigits() {
        assertFalse(NumberUtils.isDigits(null));
        assertTrue(NumberUtils.isDigits("12345"));
        assertFalse(NumberUtils.isDigits("1234.5"));
        assertFalse(NumberUtils.isDigits("-12"));
    }

    @Test
    public void testIsDigitsEmpty() {
        assertFalse(NumberUtils.isDigits(""));
    }

    @Test
    public void testMax() {
        assertEquals(5, NumberUtils.max(5));
        assertEquals(9, NumberUtils.max(3, 9, -2));
    }

    @Test(expected = IllegalArgumentException.class)
    public void testMaxEmpty() {
        NumberUtils.max();
    }
}
