package io.textkit.store;

/**
 * A stock keeping unit with a unit price in cents.
 */
public final class Item {
    private final String sku;
    private final String name;
    private final long priceCents;

    public Item(String sku, String name, long priceCents) {
        this.sku = sku;
        this.name = name;
        this.priceCents = priceCents;
    }

    public String getSku() {
        return sku;
    }

    public String getName() {
        return name;
    }

    public long getPriceCents() {
        return priceCents;
    }
}
