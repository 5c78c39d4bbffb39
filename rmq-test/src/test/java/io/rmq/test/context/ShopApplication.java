package io.rmq.test.context;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.consumer.RmqNonRetryableException;
import io.rmq.spring.annotation.RmqListener;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;

/** The small application under test: a shop whose order listener refuses an unknown SKU for good. */
@SpringBootApplication
class ShopApplication {

    record OrderPlaced(long orderId, String sku) {
    }

    @Component
    static class OrderListener {

        final List<OrderPlaced> shipped = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "shop-orders", type = "FIXED_TIME", slotAmount = "4")
        void onOrder(OrderPlaced order) {
            if (order.sku().equals("unknown")) {
                throw new RmqNonRetryableException("no such sku in the catalogue: order " + order.orderId());
            }
            shipped.add(order);
        }
    }
}
