package org.langlite.math;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class StatsTest {

    @Test
    public void testRiseFromFirst() {
        assertEquals(7L, Stats.riseFromFirst(2, 9, 4));
        assertEquals(0L, Stats.riseFromFirst(5, 1));
    }
}
