package io.rmq.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.BodyCodec;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.RmqKeys.SlotKeys;
import io.rmq.core.SlotRouter;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import io.rmq.core.TopicType;
import io.rmq.redis.RedisGateway;
import io.rmq.redis.RmqRedis;
import io.rmq.redis.SlotBatcher;
import io.rmq.redis.TraceContexts;

/**
 * Sends messages: validates them, serializes bodies canonically, routes each to its slot and writes it with the
 * merge rule of its topic type. Thread-safe.
 */
public final class RmqProducer {

    /** Members per Redis command in a batch, so one huge batch does not stall other clients. */
    private static final int CHUNK = 1000;

    private final RmqRedis redis;
    private final TopicRegistry topics;
    private final BodyCodec codec;
    private final int maxBodyBytes;
    /** Single sends to a slot that arrive while one is under way go out together. */
    private final SlotBatcher<Encoded, Long> singles;

    public RmqProducer(RmqRedis redis, TopicRegistry topics, BodyCodec codec, int maxBodyBytes) {
        this.redis = redis;
        this.topics = topics;
        this.codec = codec;
        this.maxBodyBytes = maxBodyBytes;
        this.singles = new SlotBatcher<>(CHUNK, RedisGateway.CALL_TIMEOUT_MILLIS, this::write);
    }

    public SendResult sendRangeMerge(String topic, Object body, Duration timeRange) {
        return send(OutgoingMessage.rangeMerge(topic, body, timeRange));
    }

    public SendResult sendPriority(String topic, Object body, long priority) {
        return send(OutgoingMessage.priority(topic, body, priority));
    }

    public SendResult sendFixedTime(String topic, Object body, Instant fixedTime) {
        return send(OutgoingMessage.fixedTime(topic, body, fixedTime));
    }

    public SendResult send(OutgoingMessage message) {
        return RedisGateway.await(sendAsync(message), "sending to topic '" + message.topic() + "'");
    }

    /**
     * Validation errors are thrown at once; Redis failures complete the future exceptionally. Sends to one slot that
     * arrive while another is under way are written together in one script call (no waiting when the slot is idle).
     */
    public CompletableFuture<SendResult> sendAsync(OutgoingMessage message) {
        return sendAsync(message, Map.of());
    }

    /**
     * As {@link #sendAsync(OutgoingMessage)}, storing {@code context} (a trace context, e.g. {@code traceparent})
     * beside the message in its slot, for the consumer's {@code Delivery.context()}: RANGE_MERGE keeps the context
     * of the send that added the message, PRIORITY and FIXED_TIME take the latest sender's. An empty context stores
     * nothing and costs nothing.
     */
    public CompletableFuture<SendResult> sendAsync(OutgoingMessage message, Map<String, String> context) {
        Encoded encoded = encode(message, codec.encode(message.body()), TraceContexts.encode(context));
        return singles.submit(encoded.slot, encoded)
                .thenApply(added -> new SendResult(message.topic(), encoded.slot.slot(), added == 0));
    }

    public BatchResult sendBatch(Collection<OutgoingMessage> messages) {
        return RedisGateway.await(sendBatchAsync(messages), "sending a batch of " + messages.size() + " messages");
    }

    /**
     * Groups the messages by slot and writes each group with one native multi-member ZADD, all pipelined. Every
     * message is validated before anything is written. RANGE_MERGE due times come from an estimate of Redis's clock
     * (see {@code RedisClock}); single sends compute them inside Redis.
     */
    public CompletableFuture<BatchResult> sendBatchAsync(Collection<OutgoingMessage> messages) {
        return sendBatchAsync(messages, Map.of());
    }

    /**
     * As {@link #sendBatchAsync(Collection)}, storing {@code context} beside every message of the batch (see
     * {@link #sendAsync(OutgoingMessage, Map)}). With a context the batch goes through the send script (one call per
     * slot and chunk), which writes messages and contexts atomically; without one, through native ZADDs.
     */
    public CompletableFuture<BatchResult> sendBatchAsync(Collection<OutgoingMessage> messages,
            Map<String, String> context) {
        byte[] storedContext = TraceContexts.encode(context);
        Map<SlotKeys, List<Encoded>> bySlot = new LinkedHashMap<>();
        try (BodyCodec.Encoder encoder = codec.encoder()) {
            for (OutgoingMessage message : messages) {
                Encoded encoded = encode(message, encoder.encode(message.body()), storedContext);
                bySlot.computeIfAbsent(encoded.slot, s -> new ArrayList<>()).add(encoded);
            }
        }
        List<CompletableFuture<Long>> writes = new ArrayList<>();
        bySlot.forEach((slot, group) -> {
            for (int from = 0; from < group.size(); from += CHUNK) {
                writes.add(writeBatch(slot, group.subList(from, Math.min(group.size(), from + CHUNK))));
            }
        });
        return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).thenApply(v -> {
            long added = 0;
            for (CompletableFuture<Long> write : writes) {
                added += write.join();
            }
            return new BatchResult(messages.size(), added);
        });
    }

    /** Single sends: send.lua reports per message whether it merged. */
    private CompletableFuture<List<Long>> write(SlotKeys slot, List<Encoded> group) {
        TopicType type = group.get(0).type;
        return redis.send(slot, type == TopicType.RANGE_MERGE, type == TopicType.PRIORITY, members(group),
                parameters(group), contexts(group));
    }

    /** Batches: a native ZADD, only the count of new messages (with contexts: send.lua, counting the new ones). */
    private CompletableFuture<Long> writeBatch(SlotKeys slot, List<Encoded> group) {
        TopicType type = group.get(0).type;
        List<byte[]> contexts = contexts(group);
        if (contexts != null) {
            return redis.send(slot, type == TopicType.RANGE_MERGE, type == TopicType.PRIORITY, members(group),
                    parameters(group), contexts).thenApply(flags -> {
                        long added = 0;
                        for (long flag : flags) {
                            added += flag;
                        }
                        return added;
                    });
        }
        return redis.sendBatch(slot, type == TopicType.RANGE_MERGE, type == TopicType.PRIORITY, members(group),
                parameters(group));
    }

    /** Per message its stored context, or null when no message of the group carries one (the common case). */
    private static List<byte[]> contexts(List<Encoded> group) {
        List<byte[]> contexts = null;
        for (int i = 0; i < group.size(); i++) {
            if (group.get(i).context != null) {
                if (contexts == null) {
                    contexts = new ArrayList<>(group.size());
                    for (int k = 0; k < group.size(); k++) {
                        contexts.add(group.get(k).context);
                    }
                }
                break;
            }
        }
        return contexts;
    }

    private static List<byte[]> members(List<Encoded> group) {
        List<byte[]> members = new ArrayList<>(group.size());
        for (Encoded e : group) {
            members.add(e.member);
        }
        return members;
    }

    private static List<Long> parameters(List<Encoded> group) {
        List<Long> parameters = new ArrayList<>(group.size());
        for (Encoded e : group) {
            parameters.add(e.parameter);
        }
        return parameters;
    }

    /** Validates a message whose body was serialized to {@code member} and routes it to its slot. */
    private Encoded encode(OutgoingMessage message, byte[] member, byte[] context) {
        TopicDefinition topic = topics.get(message.topic());
        if (topic.type() != message.type()) {
            throw new RmqInvalidArgumentException("type", message.type(), "does not match " + topic.describe()
                    + "; send " + topic.type() + " messages to it");
        }
        if (member.length > maxBodyBytes) {
            throw new RmqInvalidArgumentException("body", member.length + " bytes",
                    "must be at most " + maxBodyBytes + " bytes after serialization (rmq.max-body-size; topic '"
                            + topic.name() + "')");
        }
        if (member.length == 0) {
            throw new RmqInvalidArgumentException("body", "0 bytes", "must not be empty (topic '" + topic.name() + "')");
        }
        SlotKeys slot = redis.keys().slots(topic)[SlotRouter.slot(member, message.slotBasis(), topic.slotAmount())];
        return new Encoded(slot, topic.type(), member, message.parameter(), context);
    }

    /** @param context the trace context to store beside the message ({@link TraceContexts}), or null */
    private record Encoded(SlotKeys slot, TopicType type, byte[] member, long parameter, byte[] context) {
    }
}
