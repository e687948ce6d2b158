package org.langlite;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class StringUtilsTest {

    @Test
    public void testIsBlank() {
        assertTrue(StringUtils.isBlank(null));
        assertTrue(StringUtils.isBlank(""));
        assertTrue(StringUtils.isBlank(" \t\n"));
        assertFalse(StringUtils.isBlank(" a "));
    }

    @Test
    public void testAbbreviate() {
        assertNull(StringUtils.abbreviate(null, 4));
        assertEquals("", StringUtils.abbreviate("", 4));
        assertEquals("abc...", StringUtils.abbreviate("abcdefghij", 6));
        assertEquals("Now is the time for...", StringUtils.abbreviate("Now is the time for all good men", 22));
    }

    @Test(expected = IllegalArgumentException.class)
    public void testAbbreviateTooNarrow() {
        StringUtils.abbreviate("abcdefg", 3);
    }

    @Test
    public void testAbbreviateExactWidth() {
        assertEquals("abcdef", StringUtils.abbreviate("abcdef", 6));
        assertEquals("abcd", StringUtils.abbreviate("abcd", 4));
    }

    @Test
    public void testCapitalize() {
        assertNull(StringUtils.capitalize(null));
        assertEquals("", StringUtils.capitalize(""));
        assertEquals("Cat", StringUtils.capitalize("cat"));
        assertEquals("CAT", StringUtils.capitalize("CAT"));
    }

    @Test
    public void testRepeat() {
        assertNull(StringUtils.repeat(null, ",", 2));
        assertEquals("", StringUtils.repeat("ab", ",", 0));
        assertEquals("ab,ab,ab", StringUtils.repeat("ab", ",", 3));
        assertEquals("abab", StringUtils.repeat("ab", null, 2));
    }
}
