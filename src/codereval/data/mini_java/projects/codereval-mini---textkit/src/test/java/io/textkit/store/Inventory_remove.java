package io.textkit.store;

public class Inventory_remove {
    public static void main(String[] args) {
        Inventory inventory = new Inventory();
        inventory.add("tea", 3);
        inventory.add("jam", 1);
        System.out.println(inventory.remove("tea", 2) == 2);
        System.out.println(inventory.totalQuantity() == 2);
        System.out.println(inventory.remove("tea", 5) == 1);
        System.out.println(inventory.remove("tea", 1) == 0);
        System.out.println(inventory.remove("nope", 1) == 0);
        System.out.println(inventory.remove("jam", -3) == 0);
        System.out.println(inventory.totalQuantity() == 1);
    }
}
