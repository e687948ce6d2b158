package io.textkit;

import static org.junit.Assert.assertEquals;

import java.util.Arrays;
import java.util.Collections;
import org.junit.Test;

public class Texts_joinSorted {
    @Test
    public void sortsAndDropsDuplicates() {
        assertEquals("a,b,c", Texts.joinSorted(Arrays.asList("c", "a", "b", "a"), ","));
    }

    @Test
    public void emptyInputs() {
        assertEquals("", Texts.joinSorted(null, ","));
        assertEquals("", Texts.joinSorted(Collections.emptyList(), ","));
        assertEquals("x", Texts.joinSorted(Collections.singletonList("x"), " - "));
    }
}
