package codereval.training;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Training for class-data sharing (codereval.harness.Train): passing and failing tests. */
class JupiterTraining {
    private List<String> items;

    @BeforeEach
    void setUp() {
        items = new ArrayList<>(List.of("b", "a", "c"));
    }

    @Test
    void passes() {
        items.sort(null);
        assertEquals("a", items.get(0));
        assertArrayEquals(new int[] {1, 2}, new int[] {1, 2});
        assertTrue(items.contains("c"));
        assertFalse(items.isEmpty());
        assertNotNull(String.format("%s-%d", "x", 1));
        assertThrows(IndexOutOfBoundsException.class, () -> items.get(9));
    }

    @Test
    void failsAnAssertion() {
        assertEquals(1, items.size(), "three items");
    }

    @Test
    void throwsAnError() {
        throw new IllegalStateException("training");
    }
}
