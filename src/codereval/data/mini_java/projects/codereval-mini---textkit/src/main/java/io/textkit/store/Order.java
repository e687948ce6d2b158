package io.textkit.store;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * An order: items with quantities.
 */
public final class Order {
    /** One order line. */
    public static final class Line {
        private final Item item;
        private final int quantity;

        public Line(Item item, int quantity) {
            this.item = item;
            this.quantity = quantity;
        }

        public Item getItem() {
            return item;
        }

        public int getQuantity() {
            return quantity;
        }
    }

    private final List<Line> lines = new ArrayList<>();

    public Order add(Item item, int quantity) {
        lines.add(new Line(item, quantity));
        return this;
    }

    public List<Line> getLines() {
        return Collections.unmodifiableList(lines);
    }
}
