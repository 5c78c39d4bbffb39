package io.rmq.modulith;

import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.modulith.shop.OrderPlaced;
import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqListener;

/** The tests' listener of order-placed: every delivery, and how many per message id. */
public class Deliveries {

    final Queue<RmqMessage<OrderPlaced>> messages = new ConcurrentLinkedQueue<>();
    final Map<String, AtomicInteger> byId = new ConcurrentHashMap<>();

    @RmqListener(topic = "order-placed")
    void placed(RmqMessage<OrderPlaced> message) {
        messages.add(message);
        byId.computeIfAbsent(String.valueOf(message.id()), id -> new AtomicInteger()).incrementAndGet();
    }

    int count(String id) {
        AtomicInteger count = byId.get(id);
        return count == null ? 0 : count.get();
    }
}
