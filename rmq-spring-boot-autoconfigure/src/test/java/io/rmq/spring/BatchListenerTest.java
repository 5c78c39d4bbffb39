package io.rmq.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.Rmq;
import io.rmq.admin.MessageRef;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.consumer.RmqBatchFailure;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@code @RmqListener(batch = "true")} end to end on a real Redis, standalone and cluster, and its start-up checks. */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class BatchListenerTest {

    record Order(long id) {
    }

    /** One call of a batch method: what it got. */
    record Call(List<Long> ids, int slot, List<Integer> attempts) {
    }

    static class Listeners {

        final List<Call> orders = new CopyOnWriteArrayList<>();
        final List<Call> messages = new CopyOnWriteArrayList<>();
        final List<Call> springMessages = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "b-orders", type = "FIXED_TIME", slotAmount = "4", batch = "${it.batch:true}",
                batchSize = "5", concurrency = "2")
        void orders(List<Order> orders, @Header(RmqHeaders.SLOT) int slot,
                @Header(RmqHeaders.ATTEMPT) List<Integer> attempts) {
            this.orders.add(new Call(orders.stream().map(Order::id).toList(), slot, attempts));
        }

        /** Odd ids fail their first attempt: only they come again. */
        @RmqListener(topic = "b-messages", type = "FIXED_TIME", slotAmount = "2", batch = "true", batchSize = "10")
        void messages(List<RmqMessage<Order>> messages) {
            this.messages.add(new Call(messages.stream().map(m -> m.payload().id()).toList(), messages.get(0).slot(),
                    messages.stream().map(RmqMessage::attempt).toList()));
            List<Integer> failed = new ArrayList<>();
            for (int i = 0; i < messages.size(); i++) {
                if (messages.get(i).payload().id() % 2 == 1 && messages.get(i).attempt() == 1) {
                    failed.add(i);
                }
            }
            if (!failed.isEmpty()) {
                throw new RmqBatchFailure("odd ids failed", new IllegalStateException("odd"),
                        failed.stream().mapToInt(Integer::intValue).toArray());
            }
        }

        /** Spring's Message: the payload is the list, the per-message headers are lists. */
        @RmqListener(topic = "b-spring", type = "PRIORITY", slotAmount = "1", batch = "true")
        void springMessages(Message<List<Order>> batch) {
            @SuppressWarnings("unchecked")
            List<Integer> attempts = (List<Integer>) batch.getHeaders().get(RmqHeaders.ATTEMPT);
            springMessages.add(new Call(batch.getPayload().stream().map(Order::id).toList(),
                    batch.getHeaders().get(RmqHeaders.SLOT, Integer.class), attempts));
        }
    }

    /** A batch listener's return value is sent once per batch by {@code @SendTo}. */
    static class Replying {

        final List<Integer> sizes = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "b-counted", type = "FIXED_TIME", slotAmount = "2", batch = "true")
        @org.springframework.messaging.handler.annotation.SendTo("b-counts")
        String count(List<Order> orders, @Header(RmqHeaders.SLOT) int slot) {
            sizes.add(orders.size());
            return "slot " + slot + ": " + orders.stream().map(o -> String.valueOf(o.id())).sorted()
                    .reduce((a, b) -> a + "," + b).orElseThrow();
        }
    }

    @Test
    void aBatchListenersReturnValueIsSentOncePerBatch() {
        runner(RedisTopology.STANDALONE).withPropertyValues("rmq.topics.b-counts.type=FIXED_TIME")
                .withBean(Replying.class).run(context -> {
                    assertThat(context).hasNotFailed();
                    Rmq rmq = context.getBean(Rmq.class);
                    List<OutgoingMessage> sent = new ArrayList<>();
                    for (long id = 0; id < 20; id++) {
                        sent.add(OutgoingMessage.fixedTime("b-counted", new Order(id), Instant.now()));
                    }
                    rmq.producer().sendBatch(sent);
                    Replying replying = context.getBean(Replying.class);
                    await().atMost(Duration.ofSeconds(30)).until(() -> replying.sizes.stream()
                            .mapToInt(Integer::intValue).sum() == 20);
                    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                            rmq.admin().stats("b-counts").waiting()).isEqualTo(replying.sizes.size()));
                });
    }

    private static ApplicationContextRunner runner(RedisTopology topology) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                .withPropertyValues(topology.springProperties().entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new))
                .withPropertyValues("rmq.key-prefix=batch-" + UUID.randomUUID(), "rmq.consumer.backoff.initial=50ms",
                        "rmq.consumer.backoff.jitter=0");
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void batchListenersGetListsOfOneSlotAndSettleThemTogether(RedisTopology topology) {
        runner(topology).withBean(Listeners.class).run(context -> {
            assertThat(context).hasNotFailed();
            Listeners listeners = context.getBean(Listeners.class);
            Rmq rmq = context.getBean(Rmq.class);
            List<OutgoingMessage> sent = new ArrayList<>();
            for (long id = 0; id < 40; id++) {
                sent.add(OutgoingMessage.fixedTime("b-orders", new Order(id), Instant.now()));
                sent.add(OutgoingMessage.fixedTime("b-messages", new Order(id), Instant.now()));
            }
            for (long id = 0; id < 6; id++) {
                sent.add(OutgoingMessage.priority("b-spring", new Order(id), id));
            }
            try (LogCapture log = LogCapture.rmq()) {
                rmq.producer().sendBatch(sent);
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    assertThat(ids(listeners.orders)).hasSize(40);
                    assertThat(ids(listeners.messages)).hasSize(60);
                    assertThat(ids(listeners.springMessages)).hasSize(6);
                    for (String topic : List.of("b-orders", "b-messages", "b-spring")) {
                        var stats = rmq.admin().stats(topic);
                        assertThat(stats.pending()).as("%s", stats).isZero();
                    }
                });
                assertThat(log.warnings()).hasSize(20).allMatch(line -> line.contains("retrying after its backoff"));
            }
            assertThat(ids(listeners.orders)).doesNotHaveDuplicates();
            assertThat(listeners.orders).allSatisfy(call -> {
                assertThat(call.ids()).hasSizeBetween(1, 5).hasSameSizeAs(call.attempts());
                assertThat(call.attempts()).containsOnly(1);
                assertThat(call.ids()).allSatisfy(id -> assertThat(slotOf(rmq, "b-orders", id)).isEqualTo(call.slot()));
            });
            Map<Long, List<Integer>> attempts = new TreeMap<>();
            listeners.messages.forEach(call -> {
                for (int i = 0; i < call.ids().size(); i++) {
                    attempts.computeIfAbsent(call.ids().get(i), id -> new ArrayList<>()).add(call.attempts().get(i));
                }
            });
            assertThat(attempts).hasSize(40).allSatisfy((id, seen) -> assertThat(seen)
                    .isEqualTo(id % 2 == 1 ? List.of(1, 2) : List.of(1)));
            assertThat(listeners.springMessages).allSatisfy(call -> assertThat(call.attempts())
                    .hasSameSizeAs(call.ids()).containsOnly(1));
            assertThat(listeners.springMessages.get(0).ids().get(0)).as("highest priority first").isEqualTo(5);
        });
    }

    private static int slotOf(Rmq rmq, String topic, long id) {
        return rmq.admin().find(MessageRef.body(topic, new Order(id))).slot();
    }

    private static List<Long> ids(List<Call> calls) {
        return calls.stream().flatMap(call -> call.ids().stream()).toList();
    }

    static class OrderlyBatch {
        @RmqListener(id = "ordered-batch", topic = "b-ordered", type = "FIXED_TIME", batch = "true", mode = "ORDERLY")
        void handle(List<String> bodies) {
        }
    }

    static class BatchByProperties {
        @RmqListener(id = "configured", topic = "b-ordered", type = "FIXED_TIME", batch = "true")
        void handle(List<String> bodies) {
        }
    }

    static class BatchOfOne {
        @RmqListener(topic = "b-ordered", type = "FIXED_TIME", batch = "true")
        void handle(String body) {
        }
    }

    @Test
    void aBatchListenerCannotBeOrderly() {
        runner(RedisTopology.STANDALONE).withBean("myListener", OrderlyBatch.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure()))
                    .contains("@RmqListener on bean 'myListener' method 'OrderlyBatch.handle'")
                    .contains("listener 'ordered-batch': attribute batch 'true' cannot be used with mode ORDERLY"
                            + " (set by the mode attribute)")
                    .contains("one message after another");
        });
    }

    @Test
    void aBatchListenerMadeOrderlyByPropertiesFailsToo() {
        runner(RedisTopology.STANDALONE).withPropertyValues("rmq.listeners.configured.mode=ORDERLY")
                .withBean("myListener", BatchByProperties.class).run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(messages(context.getStartupFailure()))
                            .contains("listener 'configured': attribute batch 'true' cannot be used with mode ORDERLY"
                                    + " (set by rmq.listeners.configured.mode)");
                });
    }

    @Test
    void aBatchListenerMustTakeAList() {
        runner(RedisTopology.STANDALONE).withBean("myListener", BatchOfOne.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure()))
                    .contains("@RmqListener on bean 'myListener' method 'BatchOfOne.handle'")
                    .contains("takes List<T>, List<RmqMessage<T>> or Message<List<T>>, not String");
        });
    }

    static class BatchWithBodyHeader {
        @RmqListener(topic = "b-ordered", type = "FIXED_TIME", batch = "true")
        void handle(List<String> bodies, @Header(RmqHeaders.BODY) byte[] body) {
        }
    }

    @Test
    void aBatchListenerHasNoBodyHeader() {
        runner(RedisTopology.STANDALONE).withBean("myListener", BatchWithBodyHeader.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure()))
                    .contains("a batch listener has no rmq_body header; take List<RmqMessage<T>>");
        });
    }

    @Test
    void batchFalseKeepsASingleMessageListener() {
        runner(RedisTopology.STANDALONE).withPropertyValues("it.batch=false").withBean(Single.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RmqListenerEndpointRegistry.class).getListenerContainers()).hasSize(1);
        });
    }

    static class Single {
        @RmqListener(topic = "b-single", type = "FIXED_TIME", batch = "${it.batch}")
        void handle(String body) {
        }
    }

    private static String messages(Throwable failure) {
        StringBuilder messages = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        return messages.toString();
    }
}
