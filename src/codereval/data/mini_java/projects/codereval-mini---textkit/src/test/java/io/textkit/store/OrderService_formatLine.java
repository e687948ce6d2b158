package io.textkit.store;

public class OrderService_formatLine {
    public static void main(String[] args) {
        System.out.println("Tea         3.50".equals(OrderService.formatLine(new Item("t", "Tea", 350))));
        System.out.println("Jam         12.05".equals(OrderService.formatLine(new Item("j", "Jam", 1205))));
        System.out.println("Marmalade   0.07".equals(OrderService.formatLine(new Item("m", "Marmalade", 7))));
    }
}
