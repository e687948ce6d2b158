package io.textkit.store;

public class OrderService_orderTotal {
    public static void main(String[] args) {
        OrderService service = new OrderService(new Inventory());
        Item tea = new Item("tea", "Tea", 350);
        Item jam = new Item("jam", "Jam", 1299);
        System.out.println(service.orderTotal(new Order()) == 0L);
        System.out.println(service.orderTotal(new Order().add(tea, 2).add(jam, 1)) == 1999L);
        System.out.println(service.orderTotal(new Order().add(tea, -1).add(jam, 0)) == 0L);
    }
}
