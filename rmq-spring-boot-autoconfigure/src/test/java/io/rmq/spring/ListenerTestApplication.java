package io.rmq.spring;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

import io.rmq.consumer.FailedMessage;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.RmqErrorHandler;
import io.rmq.spring.annotation.RmqListener;
import java.time.Duration;
import org.springframework.context.annotation.Primary;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.messaging.handler.annotation.SendTo;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.annotation.RmqReply;
import java.time.Instant;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;
import org.springframework.validation.annotation.Validated;
import io.rmq.consumer.Delivery;

/** A small application with one listener per case the integration tests check. */
@SpringBootConfiguration
@EnableAutoConfiguration
class ListenerTestApplication {

    record Price(long itemId, String currency, long cents) {
    }

    /** Received deliveries, per listener. */
    static class Listeners {

        final BlockingQueue<Price> ranges = new LinkedBlockingQueue<>();
        final BlockingQueue<RmqMessage<List<Price>>> priorities = new LinkedBlockingQueue<>();
        final BlockingQueue<String> fixed = new LinkedBlockingQueue<>();
        final BlockingQueue<Long> fixedLateness = new LinkedBlockingQueue<>();
        final BlockingQueue<byte[]> bytes = new LinkedBlockingQueue<>();
        final List<Integer> failingAttempts = new CopyOnWriteArrayList<>();
        final List<Long> failingTimes = new CopyOnWriteArrayList<>();
        final BlockingQueue<String> manual = new LinkedBlockingQueue<>();

        @RmqListener(topic = "${it.topics.range}", type = "RANGE_MERGE", slotAmount = "4")
        void onRange(Price price) {
            ranges.add(price);
        }

        @RmqListener(topic = "it-priority", type = "PRIORITY", concurrency = "${it.priority-concurrency:2}")
        public void onPriority(RmqMessage<List<Price>> message) {
            priorities.add(message);
        }

        /** Defined in properties (rmq.topics.it-fixed). */
        @RmqListener(topic = "it-fixed")
        public void onFixed(RmqMessage<String> message) {
            fixed.add(message.payload());
            fixedLateness.add(System.currentTimeMillis() - (long) message.score());
        }

        @RmqListener(topic = "it-bytes", type = "PRIORITY", slotAmount = "1")
        public void onBytes(byte[] body) {
            bytes.add(body);
        }

        @RmqListener(topic = "it-failing", type = "RANGE_MERGE", maxRetries = "2", backoffInitial = "200ms",
                backoffMultiplier = "2", backoffJitter = "0", lease = "5s")
        public void onFailing(RmqMessage<String> message) {
            failingAttempts.add(message.attempt());
            failingTimes.add(System.nanoTime());
            throw new IllegalStateException("cannot handle " + message.payload());
        }

        final List<String> ordered = new CopyOnWriteArrayList<>();
        final java.util.Map<String, java.util.concurrent.atomic.AtomicInteger> orderedRunning =
                new java.util.concurrent.ConcurrentHashMap<>();
        final List<String> overlaps = new CopyOnWriteArrayList<>();
        final List<Long> limited = new CopyOnWriteArrayList<>();

        /** ORDERLY through rmq.listeners.ordered.mode; entries of one account fail once, then go on in order. */
        @RmqListener(id = "ordered", topic = "it-ordered", type = "FIXED_TIME", slotAmount = "4", concurrency = "2",
                backoffInitial = "50ms", backoffJitter = "0")
        public void onOrdered(RmqMessage<String> message) throws InterruptedException {
            // one thread at a time per account (the group); accounts sharing a slot run in parallel
            String account = message.payload().substring(0, message.payload().indexOf(':'));
            var running = orderedRunning.computeIfAbsent(account, a -> new java.util.concurrent.atomic.AtomicInteger());
            if (running.incrementAndGet() != 1) {
                overlaps.add(message.payload());
            }
            try {
                Thread.sleep(2);
                ordered.add(message.payload() + "#" + message.attempt());
                if (message.payload().endsWith(":2") && message.attempt() == 1) {
                    throw new IllegalStateException("first attempt of " + message.payload() + " fails on purpose");
                }
            }
            finally {
                running.decrementAndGet();
            }
        }

        @RmqListener(id = "limited", topic = "it-limited", type = "RANGE_MERGE", slotAmount = "4", concurrency = "4",
                rateLimit = "${it.rate-limit:50/s}")
        public void onLimited(String text) {
            limited.add(System.currentTimeMillis());
        }

        final List<RmqMessage<String>> validating = new CopyOnWriteArrayList<>();
        final List<String> handledAfterDecision = new CopyOnWriteArrayList<>();
        final BlockingQueue<String> deadLetters = new LinkedBlockingQueue<>();

        /** Invalid input is not retried: noRetryFor. (Valid input is: its retries, 1 s, 2 s, ... apart, outlast the test.) */
        @RmqListener(topic = "it-validating", type = "FIXED_TIME", maxRetries = "5", backoffInitial = "1s",
                noRetryFor = IllegalArgumentException.class)
        public void onValidating(RmqMessage<String> message) {
            validating.add(message);
            if (message.payload().startsWith("invalid")) {
                throw new IllegalArgumentException("not a valid order: " + message.payload());
            }
            throw new IllegalStateException("downstream unavailable");
        }

        /** A named error handler decides: "drop-*" dropped, "later-*" retried after 100 ms and then handled. */
        @RmqListener(topic = "it-decided", type = "FIXED_TIME", maxRetries = "0", errorHandler = "dropOrLater")
        public void onDecided(RmqMessage<String> message) {
            if (message.attempt() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
            handledAfterDecision.add(message.payload() + "#" + message.attempt());
        }

        @RmqListener(topic = "it-dlt-source", type = "PRIORITY", maxRetries = "0",
                deadLetterTopic = "${it.dead-letter-topic:it-dlt}")
        public void onDeadLetterSource(String text) {
            throw new IllegalStateException("cannot handle " + text);
        }

        @RmqListener(topic = "it-dlt", type = "FIXED_TIME")
        public void onDeadLetter(String text) {
            deadLetters.add(text);
        }

        /** What a listener declaring Spring Messaging parameters received. */
        record HeaderValues(Price price, String topic, int slot, int attempt, int maxRetries, long score,
                long leaseDeadline, String listenerId, Delivery delivery) {
        }

        final BlockingQueue<HeaderValues> headerValues = new LinkedBlockingQueue<>();
        final BlockingQueue<Message<List<Price>>> springMessages = new LinkedBlockingQueue<>();
        final BlockingQueue<Price> validPrices = new LinkedBlockingQueue<>();

        @RmqListener(id = "headers", topic = "it-headers", type = "PRIORITY", slotAmount = "4", maxRetries = "3")
        public void onHeaders(@Payload Price price, @Header(RmqHeaders.TOPIC) String topic,
                @Header(RmqHeaders.SLOT) int slot, @Header(RmqHeaders.ATTEMPT) int attempt,
                @Header(RmqHeaders.MAX_RETRIES) int maxRetries, @Header(RmqHeaders.SCORE) long score,
                @Header(RmqHeaders.LEASE_DEADLINE) long leaseDeadline, @Header(RmqHeaders.LISTENER_ID) String listenerId,
                Delivery delivery) {
            headerValues.add(new HeaderValues(price, topic, slot, attempt, maxRetries, score, leaseDeadline, listenerId,
                    delivery));
        }

        @RmqListener(topic = "it-spring-message", type = "FIXED_TIME")
        public void onSpringMessage(Message<List<Price>> message) {
            springMessages.add(message);
        }

        /** Validated by the application's Validator ({@link #priceValidator()}): an invalid price is dead at once. */
        @RmqListener(topic = "it-valid", type = "FIXED_TIME", maxRetries = "5", backoffInitial = "1s")
        public void onValid(@Validated @Payload Price price) {
            validPrices.add(price);
        }

        final List<String> replySources = new CopyOnWriteArrayList<>();
        final BlockingQueue<RmqMessage<String>> priorityReplies = new LinkedBlockingQueue<>();
        final BlockingQueue<RmqMessage<Price>> rangeReplies = new LinkedBlockingQueue<>();
        final BlockingQueue<RmqMessage<String>> fixedReplies = new LinkedBlockingQueue<>();

        /** Replies to a PRIORITY topic with priority 5; "none-*" returns null: no reply. */
        @RmqListener(topic = "it-reply-source", type = "FIXED_TIME")
        @SendTo("${it.reply-topic:it-reply-priority}")
        @RmqReply(priority = "5")
        public String onReplySource(String text) {
            replySources.add(text);
            return text.startsWith("none") ? null : "re:" + text;
        }

        @RmqListener(topic = "it-reply-priority", type = "PRIORITY")
        public void onPriorityReply(RmqMessage<String> message) {
            priorityReplies.add(message);
        }

        /** Replies with a JSON body to a RANGE_MERGE topic: replies equal within the range merge. */
        @RmqListener(topic = "it-reply-prices", type = "PRIORITY")
        @SendTo("it-reply-range")
        @RmqReply(timeRange = "2s")
        public Price onReplyPrices(Price price) {
            return new Price(price.itemId(), price.currency(), 0);
        }

        @RmqListener(topic = "it-reply-range", type = "RANGE_MERGE")
        public void onRangeReply(RmqMessage<Price> message) {
            rangeReplies.add(message);
        }

        /** Returns an OutgoingMessage: sent as built (its own topic, type and time). */
        @RmqListener(topic = "it-reply-outgoing", type = "PRIORITY")
        @SendTo("it-reply-fixed")
        public OutgoingMessage onReplyOutgoing(String text) {
            return OutgoingMessage.fixedTime("it-reply-fixed", "out:" + text, Instant.now().minusSeconds(5));
        }

        @RmqListener(topic = "it-reply-fixed", type = "FIXED_TIME")
        public void onFixedReply(RmqMessage<String> message) {
            fixedReplies.add(message);
        }

        @RmqListener(id = "manual", topic = "it-manual", type = "PRIORITY", autoStartup = "false")
        public void onManual(String text) {
            manual.add(text);
        }
    }

    @Bean
    Listeners listeners() {
        return new Listeners();
    }

    /** Every failure the default error handler saw (it decides as configured). */
    static final List<FailedMessage> defaultHandlerSaw = new CopyOnWriteArrayList<>();

    /** The application's default error handler: the primary one, used by listeners that name none. */
    @Bean
    @Primary
    RmqErrorHandler recordingErrorHandler() {
        return failure -> {
            defaultHandlerSaw.add(failure);
            return FailureDecision.standard();
        };
    }

    /** Rejects negative prices (a Spring Validator: the tests run without a Bean Validation provider). */
    @Bean
    Validator priceValidator() {
        return new Validator() {
            @Override
            public boolean supports(Class<?> type) {
                return type == Price.class;
            }

            @Override
            public void validate(Object target, Errors errors) {
                if (target instanceof Price price && price.cents() < 0) {
                    errors.reject("negative", "cents must not be negative");
                }
            }
        };
    }

    @Bean
    RmqErrorHandler dropOrLater() {
        return failure -> String.valueOf(failure.payload()).startsWith("drop")
                ? FailureDecision.drop()
                : FailureDecision.retryAfter(Duration.ofMillis(100));
    }
}
