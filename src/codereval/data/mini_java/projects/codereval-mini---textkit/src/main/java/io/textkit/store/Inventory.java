package io.textkit.store;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Quantities in stock by SKU.
 */
public class Inventory {
    private final Map<String, Integer> stock = new LinkedHashMap<>();

    public void add(String sku, int quantity) {
        stock.merge(sku, quantity, Integer::sum);
    }

    private int quantityOf(String sku) {
        return stock.getOrDefault(sku, 0);
    }

    /**
     * Returns the total number of units in stock over all SKUs.
     * @return the sum of all quantities
     */
    public int totalQuantity() {
        int total = 0;
        for (int quantity : stock.values()) {
            total += quantity;
        }
        return total;
    }

    /**
     * Removes up to the given quantity of a SKU and forgets SKUs that reach zero.
     * @param sku the SKU to take from
     * @param quantity how many units are wanted
     * @return how many units were actually removed
     */
    public int remove(String sku, int quantity) {
        int available = quantityOf(sku);
        int taken = Math.min(available, Math.max(quantity, 0));
        if (available - taken == 0) {
            stock.remove(sku);
        } else {
            stock.put(sku, available - taken);
        }
        return taken;
    }
}
