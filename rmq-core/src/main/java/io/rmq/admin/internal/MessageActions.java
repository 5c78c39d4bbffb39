package io.rmq.admin.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rmq.admin.CancelResult;
import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.RescheduleResult;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisAdmin;

/**
 * What {@link io.rmq.admin.RmqAdmin} does to waiting messages named by {@link MessageRef}: where one is, cancelling
 * and rescheduling one, and running now or cancelling a selection. Every change is one atomic script per slot. Holds
 * no state of its own; any thread calls it.
 */
public final class MessageActions {

    private final RmqRedisAdmin redis;
    private final MessageLocator locator;

    public MessageActions(RmqRedisAdmin redis, MessageLocator locator) {
        this.redis = redis;
        this.locator = locator;
    }

    public MessageStatus find(MessageRef message) {
        MessageLocator.Located at = locator.locate(message);
        String topicName = at.topic().name();
        RmqRedisAdmin.Whereabouts w = RedisGateway.await(redis.find(at.slot(), at.member()),
                "finding a message in " + topicName);
        boolean priority = at.topic().type() == TopicType.PRIORITY;
        Instant retryAt = null;
        boolean inFlight = w.prepareScore() != null;
        if (w.ordered() && w.retryScore() != null && inFlight) {
            retryAt = instant(w.retryScore()); // an ordered slot's failed head, suspended until its retry
            inFlight = false;
        }
        else if (priority && w.retryScore() != null) {
            retryAt = instant(w.retryScore());
        }
        else if (!priority && w.storeScore() != null && w.failedAttempts() > 0 && !inFlight) {
            retryAt = instant(w.storeScore()); // time types wait for their retry in the store
        }
        Instant diedAt = w.deadScore() == null ? null : instant(w.deadScore());
        return new MessageStatus(topicName, at.slot().slot(), MessageLocator.payload(at.member(), w.envelope()),
                w.storeScore(), inFlight, retryAt, w.failedAttempts(), diedAt, w.deadReason(), w.cancelled(),
                MessageLocator.idOf(at.member()), MessageLocator.headers(at.member(), w.envelope()));
    }

    public CancelResult cancel(MessageRef message) {
        MessageLocator.Located at = locator.locate(message);
        boolean[] r = RedisGateway.await(redis.cancel(at.slot(), at.topic().type() == TopicType.PRIORITY,
                at.member()), "cancelling a message in " + at.topic().name());
        return new CancelResult(r[0], r[1], r[2], r[3]);
    }

    public RescheduleResult reschedule(MessageRef message, Instant dueAt) {
        MessageLocator.Located at = locator.locate(message);
        return reschedule(at, false, dueAtMillis(at.topic().name(), dueAt), "dueAt " + dueAt);
    }

    public RescheduleResult reprioritize(MessageRef message, long priority) {
        if (Math.abs(priority) > OutgoingMessage.MAX_PRIORITY) {
            throw new RmqInvalidArgumentException("priority", priority, "must be between -2^53 and 2^53 (exact in a"
                    + " Redis score)");
        }
        return reschedule(locator.locate(message), true, priority, "priority " + priority);
    }

    private static long dueAtMillis(String topicName, Instant dueAt) {
        if (dueAt == null) {
            throw new RmqInvalidArgumentException("dueAt", null, "must not be null");
        }
        long millis;
        try {
            millis = dueAt.toEpochMilli();
        }
        catch (ArithmeticException ex) {
            millis = Long.MAX_VALUE;
        }
        if (Math.abs(millis) > OutgoingMessage.MAX_PRIORITY) {
            throw new RmqInvalidArgumentException("dueAt", dueAt, "must be within ±2^53 ms of the epoch (topic '"
                    + topicName + "')");
        }
        return millis;
    }

    private RescheduleResult reschedule(MessageLocator.Located at, boolean byPriority, long score, String what) {
        String topicName = at.topic().name();
        boolean priority = at.topic().type() == TopicType.PRIORITY;
        if (priority != byPriority) {
            throw new RmqInvalidArgumentException("topic", topicName, at.topic().describe() + (priority
                    ? " orders by priority: use reprioritize(message, priority)"
                    : " orders by time: use reschedule(message, dueAt)"));
        }
        long code = RedisGateway.await(redis.reschedule(at.slot(), priority, at.member(), score),
                "rescheduling a message in " + topicName + " to " + what);
        return switch ((int) code) {
            case 1, 2 -> RescheduleResult.RESCHEDULED;
            case 3 -> RescheduleResult.IN_FLIGHT;
            case 4 -> RescheduleResult.DEAD;
            default -> RescheduleResult.NOT_FOUND;
        };
    }

    /** See {@link io.rmq.admin.RmqAdmin#runNow}. */
    public long runNow(String topicName, List<MessageRef> messages) {
        TopicDefinition topic = locator.topic(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return locator.eachSlot(topic, messages, (slot, members) -> redis.runNow(slot, priority, members),
                "making messages of " + topicName + " due now");
    }

    /** See {@link io.rmq.admin.RmqAdmin#cancelSelected}. */
    public long cancelSelected(String topicName, List<MessageRef> messages) {
        TopicDefinition topic = locator.topic(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return locator.eachSlot(topic, messages, (slot, members) -> {
            List<CompletableFuture<boolean[]>> each = new ArrayList<>(members.size());
            for (byte[] member : members) {
                each.add(redis.cancel(slot, priority, member));
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> each.stream()
                    .map(CompletableFuture::join).filter(r -> r[0] || r[1]).count());
        }, "cancelling messages of " + topicName);
    }

    private static Instant instant(double epochMillis) {
        return Instant.ofEpochMilli((long) epochMillis);
    }
}
