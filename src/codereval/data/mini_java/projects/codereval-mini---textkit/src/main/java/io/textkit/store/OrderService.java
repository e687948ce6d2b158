package io.textkit.store;

import io.textkit.Texts;

/**
 * Prices orders and formats them for receipts.
 */
public class OrderService {
    private final Inventory inventory;

    public OrderService(Inventory inventory) {
        this.inventory = inventory;
    }

    /**
     * Computes the total price of an order in cents, skipping lines with a non-positive quantity.
     * @param order the order
     * @return the sum over lines of unit price times quantity
     */
    public long orderTotal(Order order) {
        long total = 0;
        for (Order.Line line : order.getLines()) {
            if (line.getQuantity() > 0) {
                total += line.getItem().getPriceCents() * line.getQuantity();
            }
        }
        return total;
    }

    /**
     * Formats an item as a receipt line: the name padded to 12 characters, then the price as
     * euros with two decimals, e.g. "Tea         3.50".
     * @param item the item
     * @return the receipt line
     */
    public static String formatLine(Item item) {
        long cents = item.getPriceCents();
        return Texts.padRight(item.getName(), 12) + (cents / 100) + "." + String.format("%02d", cents % 100);
    }

    /**
     * Takes every line of the order out of the inventory.
     * @param order the order
     * @return the number of units that could be taken
     */
    public int fulfil(Order order) {
        int taken = 0;
        for (Order.Line line : order.getLines()) {
            taken += inventory.remove(line.getItem().getSku(), line.getQuantity());
        }
        return taken;
    }
}
