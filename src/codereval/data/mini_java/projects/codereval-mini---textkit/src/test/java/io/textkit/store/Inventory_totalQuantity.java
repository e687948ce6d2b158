package io.textkit.store;

public class Inventory_totalQuantity {
    public static void main(String[] args) {
        Inventory inventory = new Inventory();
        System.out.println(inventory.totalQuantity() == 0);
        inventory.add("tea", 3);
        inventory.add("jam", 4);
        inventory.add("tea", 2);
        System.out.println(inventory.totalQuantity() == 9);
    }
}
