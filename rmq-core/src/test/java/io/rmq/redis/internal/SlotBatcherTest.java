package io.rmq.redis.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import io.rmq.core.internal.RmqKeys;
import io.rmq.core.RmqTimeoutException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SlotBatcherTest {

    @Test
    void aCallWithoutReplyFailsNamingItsTopicAndSlot() {
        SlotBatcher<String, Long> batcher = new SlotBatcher<>(10, 50, (slot, items) -> new CompletableFuture<>());
        CompletableFuture<Long> sent = batcher.submit(new RmqKeys("rmq").slot("orders", 5), "x");
        assertThatThrownBy(sent::get).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(RmqTimeoutException.class)
                .hasMessage("a call of 1 to slot 5 of topic 'orders': no reply from Redis within 50 ms, so its outcome is"
                        + " unknown (it may or may not have been applied)");
    }

    @Test
    void itemsOfOneSlotGoOutTogetherWhileACallIsUnderWay() {
        CompletableFuture<List<Long>> first = new CompletableFuture<>();
        List<List<String>> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
        SlotBatcher<String, Long> batcher = new SlotBatcher<>(10, 60_000, (slot, items) -> {
            calls.add(items);
            return calls.size() == 1 ? first : CompletableFuture.completedFuture(items.stream().map(i -> 1L).toList());
        });
        RmqKeys.SlotKeys slot = new RmqKeys("rmq").slot("orders", 1);
        CompletableFuture<Long> a = batcher.submit(slot, "a");
        CompletableFuture<Long> b = batcher.submit(slot, "b");
        CompletableFuture<Long> c = batcher.submit(slot, "c");
        first.complete(List.of(0L));
        assertThat(a.join()).isZero();
        assertThat(b.join()).isOne();
        assertThat(c.join()).isOne();
        assertThat(calls).containsExactly(List.of("a"), List.of("b", "c"));
    }
}
