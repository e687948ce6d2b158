package org.langlite;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class IntRangeTest {

    @Test
    public void testConstructorOrdersEnds() {
        IntRange range = new IntRange(9, 3);
        assertEquals(3, range.getMinimum());
        assertEquals(9, range.getMaximum());
    }

    @Test
    public void testContains() {
        IntRange range = new IntRange(3, 9);
        assertTrue(range.contains(3));
        assertTrue(range.contains(9));
        assertFalse(range.contains(10));
    }

    @Test
    public void testOverlaps() {
        assertTrue(new IntRange(1, 5).overlaps(new IntRange(3, 8)));
        assertFalse(new IntRange(1, 5).overlaps(new IntRange(6, 8)));
        assertFalse(new IntRange(1, 5).overlaps(null));
    }

    @Test
    public void testOverlapsTouching() {
        assertTrue(new IntRange(1, 5).overlaps(new IntRange(5, 8)));
        assertTrue(new IntRange(5, 8).overlaps(new IntRange(1, 5)));
    }

    @Test
    public void testIntersectionWith() {
        IntRange range = new IntRange(1, 5);
        assertEquals(new IntRange(3, 5), range.intersectionWith(new IntRange(3, 8)));
        assertSame(range, range.intersectionWith(new IntRange(5, 1)));
        assertEquals(new IntRange(5, 5), range.intersectionWith(new IntRange(5, 9)));
    }

    @Test(expected = IllegalArgumentException.class)
    public void testIntersectionWithDisjoint() {
        new IntRange(1, 5).intersectionWith(new IntRange(6, 8));
    }

    @Test
    public void testFit() {
        IntRange range = new IntRange(0, 10);
        assertEquals(0, range.fit(-4));
        assertEquals(7, range.fit(7));
        assertEquals(10, range.fit(11));
    }
}
