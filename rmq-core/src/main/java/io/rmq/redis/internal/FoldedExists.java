package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.internal.Timeouts;
import org.jspecify.annotations.Nullable;

/**
 * Folds the idle checks' {@code EXISTS} of an engine's listeners into one command on a standalone server: a check
 * waits up to the time its caller allows for the checks of others, then one {@code EXISTS} of all their keys answers
 * every one of them when it finds nothing (the usual idle case); when it finds something, each check asks for its own
 * keys. The listeners' checks fall on the same times for this (see the container's {@code IdleCheckTimes}).
 * <p>
 * Threads: {@link #count} from any thread (a poller, the timer threads); the batch being gathered is guarded by this
 * object's monitor; a batch is sent from the deadline thread ({@link Timeouts#after}), answered on Lettuce's.
 */
final class FoldedExists {

    private final RedisGateway gateway;
    /** The checks waiting to be sent together; null when none waits. */
    private @Nullable Batch gathering;

    FoldedExists(RedisGateway gateway) {
        this.gateway = gateway;
    }

    /** The checks of one gathering: each one's keys and the future of its count. */
    private static final class Batch {
        final List<byte[][]> keys = new ArrayList<>();
        final List<CompletableFuture<Long>> counts = new ArrayList<>();
        long sendAt;
    }

    /**
     * How many of {@code keys} exist, with the {@code EXISTS} sent at most {@code foldMillis} from now together with
     * the checks that came meanwhile (0: at once, alone).
     */
    CompletableFuture<Long> count(byte[][] keys, long foldMillis) {
        if (foldMillis <= 0) {
            return exists(keys);
        }
        CompletableFuture<Long> count = new CompletableFuture<>();
        long sendAt = System.currentTimeMillis() + foldMillis;
        Batch batch;
        boolean schedule;
        synchronized (this) {
            batch = gathering;
            if (batch == null) {
                batch = new Batch();
                gathering = batch;
            }
            schedule = batch.counts.isEmpty() || sendAt < batch.sendAt;
            if (schedule) {
                batch.sendAt = sendAt;
            }
            batch.keys.add(keys);
            batch.counts.add(count);
        }
        if (schedule) {
            Batch scheduled = batch;
            Timeouts.after(foldMillis, () -> send(scheduled));
        }
        return count;
    }

    /** Sends {@code batch} unless it was sent already (an earlier deadline of one of its checks). */
    private void send(Batch batch) {
        synchronized (this) {
            if (gathering != batch) {
                return;
            }
            gathering = null;
        }
        if (batch.keys.size() == 1) {
            relay(exists(batch.keys.get(0)), batch.counts.get(0));
            return;
        }
        List<byte[]> all = new ArrayList<>();
        batch.keys.forEach(keys -> all.addAll(List.of(keys)));
        exists(all.toArray(byte[][]::new)).whenComplete((found, error) -> {
            for (int i = 0; i < batch.counts.size(); i++) {
                if (error != null) {
                    batch.counts.get(i).completeExceptionally(error);
                }
                else if (found == 0) {
                    batch.counts.get(i).complete(0L);
                }
                else {
                    relay(exists(batch.keys.get(i)), batch.counts.get(i)); // something exists: whose, each asks
                }
            }
        });
    }

    private CompletableFuture<Long> exists(byte[][] keys) {
        try {
            return gateway.commands().exists(keys).toCompletableFuture();
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    private static void relay(CompletableFuture<Long> from, CompletableFuture<Long> to) {
        from.whenComplete((value, error) -> {
            if (error != null) {
                to.completeExceptionally(error);
            }
            else {
                to.complete(value);
            }
        });
    }
}
