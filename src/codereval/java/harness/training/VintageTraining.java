package codereval.training;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import org.junit.Before;
import org.junit.Test;

/** Training for class-data sharing (codereval.harness.Train): JUnit 4 on its own runner. */
public class VintageTraining {
    private int[] values;

    @Before
    public void setUp() {
        values = new int[] {3, 1, 2};
    }

    @Test
    public void passes() {
        Arrays.sort(values);
        assertArrayEquals(new int[] {1, 2, 3}, values);
        assertTrue(values.length == 3);
    }

    @Test
    public void failsAnAssertion() {
        assertEquals("sorted", 1, values[0]);
    }

    @Test(expected = ArithmeticException.class)
    public void expectsAnException() {
        System.out.println(1 / (values.length - 3));
    }
}
