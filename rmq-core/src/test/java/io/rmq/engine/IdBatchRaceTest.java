package io.rmq.engine;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.consumer.Delivery;
import io.rmq.core.TopicType;
import io.rmq.producer.BatchResult;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Batches of id messages sent again and again while a container takes and acknowledges the same ids: on standalone
 * Redis each slot's part is a MULTI of the envelopes' HSET and the members' ZADD (native commands), on a cluster a
 * send.lua call. Whatever the interleaving with pops and acks (an ack of an in-flight copy forgets its envelope unless
 * a newer copy waits), every delivery has its payload and each id's last payload is handled after its last send.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class IdBatchRaceTest extends EngineTestSupport {

    private static final int IDS = 12;
    private static final int ROUNDS = 100;
    private static final int CHAINS = 16;

    private final java.util.concurrent.ExecutorService senders = java.util.concurrent.Executors.newFixedThreadPool(2);

    IdBatchRaceTest(RedisTopology topology) {
        super(topology);
    }

    @org.junit.jupiter.api.AfterEach
    void stopSenders() {
        senders.shutdownNow();
    }

    @Test
    void everyIdsLastPayloadIsHandledAndNoDeliveryLacksItsPayload() throws Exception {
        // three passes: the interleavings this guards against are rare on a quiet machine (an event loop that stops
        // part-way through its queued writes)
        for (int pass = 0; pass < 3; pass++) {
            race("race-" + pass);
        }
    }

    private void race(String topic) throws Exception {
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 4);
        // per id, the payloads handled in order; "v<round>" payloads, so a missing one shows as a wrong round
        Map<String, List<String>> handled = new ConcurrentHashMap<>();
        List<String> broken = new CopyOnWriteArrayList<>();
        ListenerContainer container = rmq.container(topic, FAST, String.class, (String body, Delivery d) -> {
            if (d.id() == null || body == null || !body.startsWith("v")) {
                broken.add(d.id() + "=" + body);
            }
            handled.computeIfAbsent(d.id(), id -> new CopyOnWriteArrayList<>()).add(body);
        }, ContainerOptions.of("racer", 4));
        container.start();
        try {
            long multisBefore = multis();
            // CHAINS chains of batches on ids of their own, each batch sent once the one before completed: half from
            // that completion (a Lettuce event-loop thread, where the consumer's pops and acks complete too), half
            // from threads of their own, so that writes of both kinds meet on the connection
            List<CompletableFuture<Long>> chains = new ArrayList<>();
            for (int chain = 0; chain < CHAINS; chain++) {
                chains.add(rounds(topic, chain, 0, 0));
            }
            long added = 0;
            for (CompletableFuture<Long> chain : chains) {
                added += chain.get(60, TimeUnit.SECONDS);
            }
            if (topology == RedisTopology.STANDALONE) {
                // the first batches go through send.lua while the engine opens the transactions' connection
                assertThat(multis() - multisBefore).as("batches written as MULTI / EXEC").isGreaterThan(ROUNDS);
            }
            String last = "v" + (ROUNDS - 1);
            await().atMost(60, TimeUnit.SECONDS).until(() -> handled.size() == IDS * CHAINS
                    && handled.values().stream().allMatch(bodies -> bodies.get(bodies.size() - 1).equals(last))
                    && rmq.admin().stats(topic).waiting() == 0 && rmq.admin().stats(topic).inFlight() == 0);
            assertThat(broken).as("deliveries without their payload").isEmpty();
            assertThat(added).as("at least one new copy per id, at most one per send").isBetween((long) IDS * CHAINS,
                    (long) IDS * CHAINS * ROUNDS);
            long envelopes = 0;
            for (int slot = 0; slot < 4; slot++) {
                byte[] msg = io.rmq.internal.RmqInternals.redis(rmq).keys().slot(topic, slot).msg();
                envelopes += raw(c -> c.hlen(msg));
            }
            assertThat(envelopes).as("every envelope forgotten with its last copy").isZero();
        }
        finally {
            container.stop();
        }
    }

    /** Sends rounds {@code round..ROUNDS-1} of chain {@code chain}, each from the completion of the one before. */
    private CompletableFuture<Long> rounds(String topic, int chain, int round, long added) {
        if (round == ROUNDS) {
            return CompletableFuture.completedFuture(added);
        }
        List<OutgoingMessage> batch = new ArrayList<>(IDS);
        for (int i = 0; i < IDS; i++) {
            batch.add(OutgoingMessage.fixedTime(topic, "v" + round, Instant.now().minusSeconds(1))
                    .withId("id-" + chain + "-" + i).withHeader("round", Integer.toString(round)));
        }
        java.util.function.Function<BatchResult, CompletableFuture<Long>> next = result -> {
            assertThat(result.sent()).isEqualTo(IDS);
            return rounds(topic, chain, round + 1, added + result.added());
        };
        CompletableFuture<BatchResult> sent = rmq.producer().sendBatchAsync(batch);
        return chain % 2 == 0 ? sent.thenCompose(next) : sent.thenComposeAsync(next, senders);
    }

    /** MULTI calls Redis counted so far (standalone; on a cluster, of whichever node answers). */
    private long multis() {
        String stats = raw(c -> c.info("commandstats"));
        java.util.regex.Matcher calls = java.util.regex.Pattern.compile("cmdstat_multi:calls=(\\d+)").matcher(stats);
        return calls.find() ? Long.parseLong(calls.group(1)) : 0;
    }
}
