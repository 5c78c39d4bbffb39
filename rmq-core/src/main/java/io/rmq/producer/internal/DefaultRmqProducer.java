package io.rmq.producer.internal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.BodyCodec;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.internal.SlotRouter;
import io.rmq.core.internal.Utf8;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import io.rmq.core.TopicType;
import io.rmq.core.RmqRedisFullException;
import io.rmq.redis.internal.RedisFull;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.SlotBatcher;
import io.rmq.redis.internal.Envelope;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.SendScope;
import io.rmq.producer.BatchResult;
import io.rmq.producer.MessageLimits;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.RmqProducer;
import io.rmq.producer.SendResult;
import io.rmq.redis.internal.BatchPart;
import org.jspecify.annotations.Nullable;

/**
 * The {@link RmqProducer} of an {@link io.rmq.Rmq}: validates messages, serializes bodies canonically, routes each to
 * its slot and writes it with the merge rule of its topic type. Thread-safe.
 */
public final class DefaultRmqProducer implements RmqProducer {

    /** Members per Redis command in a batch, so one huge batch does not stall other clients. */
    private static final int CHUNK = 1000;
    /** send.lua's answer for a single send it refused: its expiry had passed ('E'). */
    private static final long EXPIRED = -1;
    /** send.lua's answer for a single send a deduplication window dropped ('D'). */
    private static final long DEDUPLICATED = -2;

    private final RmqRedis redis;
    private final TopicRegistry topics;
    private final BodyCodec codec;
    private final int maxBodyBytes;
    private final MessageLimits limits;
    /** Single sends to a slot that arrive while one is under way go out together. */
    private final SlotBatcher<Encoded, Long> singles;
    private final RmqInstrumentation instrumentation;
    /** False with {@link RmqInstrumentation#NONE}: no clock read, no scope per send. */
    private final boolean instrumented;
    /**
     * False also when the instrumentation is not {@link RmqInstrumentation#timed()}: the send scopes still end on each
     * send's outcome, but no clock is read and no {@code operation("send")} reported.
     */
    private final boolean timed;
    /** Learns the mode of topics known here without one, for grouped sends to them (see {@link #encode}). */
    private final ModeLookups modes;

    /** Made by the {@link io.rmq.Rmq} facade. */
    public DefaultRmqProducer(RmqRedis redis, TopicRegistry topics, BodyCodec codec, int maxBodyBytes, MessageLimits limits,
            RmqInstrumentation instrumentation) {
        this.limits = limits == null ? MessageLimits.DEFAULT : limits;
        this.instrumentation = instrumentation == null ? RmqInstrumentation.NONE : instrumentation;
        this.instrumented = this.instrumentation != RmqInstrumentation.NONE;
        this.timed = this.instrumentation.timed(); // NONE is not timed
        this.redis = redis;
        this.topics = topics;
        this.codec = codec;
        this.maxBodyBytes = maxBodyBytes;
        this.singles = new SlotBatcher<>(CHUNK, RedisGateway.CALL_TIMEOUT_MILLIS, this::write);
        this.modes = new ModeLookups(redis::topic, topics, ModeLookups.PERIOD);
    }

    @Override
    public SendResult sendRangeMerge(String topic, Object body, Duration timeRange) {
        return send(OutgoingMessage.rangeMerge(topic, body, timeRange));
    }

    @Override
    public SendResult sendPriority(String topic, Object body, long priority) {
        return send(OutgoingMessage.priority(topic, body, priority));
    }

    @Override
    public SendResult sendFixedTime(String topic, Object body, Instant fixedTime) {
        return send(OutgoingMessage.fixedTime(topic, body, fixedTime));
    }

    @Override
    public SendResult send(OutgoingMessage message) {
        return RedisGateway.await(sendAsync(message), "sending to topic '" + message.topic() + "'");
    }

    /** Sends to one slot that arrive while another is under way are written together in one script call. */
    @Override
    public CompletableFuture<SendResult> sendAsync(OutgoingMessage message) {
        return sendAsync(message, true);
    }

    /**
     * Sends a message that Redis already holds (a dead message forwarded to its dead-letter topic): written as any
     * send, but not checked against this producer's size limits (body, id, headers). Those limits were applied when
     * the message was first sent, perhaps by an instance configured otherwise; a message RMQ stored must never be
     * refused on its way on.
     */
    public CompletableFuture<SendResult> sendStoredAsync(OutgoingMessage message) {
        return sendAsync(message, false);
    }

    /** @param limited whether the size limits apply (not to a message Redis already holds: {@link #sendStoredAsync}) */
    private CompletableFuture<SendResult> sendAsync(OutgoingMessage message, boolean limited) {
        if (!instrumented) {
            Encoded encoded = encode(message, codec.encode(message.body()), null, limited);
            return refusedIfExpired(full(singles.submit(encoded.slot, encoded), encoded.slot, message.topic()), message)
                    .thenApply(added -> result(message.topic(), encoded.slot, added));
        }
        // on the caller's thread, before encoding: an observation opened here sees the sender's trace context
        SendScope scope = instrumentation.sendStarted(message.topic(), 1);
        Encoded encoded;
        try {
            // the trace context the instrumentation gives this send (propagation on) travels as headers
            encoded = encode(message, codec.encode(message.body()), scope.context(), limited);
        }
        catch (RuntimeException ex) {
            scope.finished(0, 0, ex);
            throw ex;
        }
        CompletableFuture<Long> sent = refusedIfExpired(full(singles.submit(encoded.slot, encoded), encoded.slot,
                message.topic()), message);
        return sent.whenComplete((added, error) -> {
            if (error != null) {
                scope.finished(0, 0, RedisGateway.unwrap(error));
            }
            else {
                scope.finished(added > 0 ? 1 : 0, added > 0 ? 0 : 1, null);
                if (added == DEDUPLICATED) {
                    instrumentation.deduplicated(message.topic(), 1);
                }
            }
        }).thenApply(added -> result(message.topic(), encoded.slot, added));
    }

    /** A single send's result from send.lua's answer for it: 1 new, 0 merged, {@link #DEDUPLICATED}. */
    private static SendResult result(String topic, SlotKeys slot, long added) {
        return added == DEDUPLICATED ? SendResult.deduplicated(topic, slot.slot())
                : new SendResult(topic, slot.slot(), added == 0);
    }

    /**
     * A single send send.lua refused (-1: its expiry instant is not after Redis's clock, nothing of it written) fails
     * alone: the other sends written in the same call are not its caller's.
     */
    private static CompletableFuture<Long> refusedIfExpired(CompletableFuture<Long> sent, OutgoingMessage message) {
        if (!message.expires()) {
            return sent; // only a message with an expiry can be refused: no stage more on a plain send's path
        }
        return sent.thenCompose(added -> added != EXPIRED ? CompletableFuture.completedFuture(added)
                : CompletableFuture.failedFuture(new RmqInvalidArgumentException("expiresAt", message.expiresAt(),
                        "must be after Redis's clock: the message had expired when Redis received it, and was not"
                                + " stored (topic '" + message.topic() + "')")));
    }

    @Override
    public BatchResult sendBatch(Collection<OutgoingMessage> messages) {
        return RedisGateway.await(sendBatchAsync(messages), "sending a batch of " + messages.size() + " messages");
    }

    /**
     * Groups the messages by slot and writes each group with one native multi-member ZADD, all written to the
     * connection together. RANGE_MERGE due times come from an estimate of Redis's clock ({@code SlotMasterClocks}), as
     * for a lone single send; single sends coalesced into one call compute them inside Redis (send.lua).
     */
    @Override
    public CompletableFuture<BatchResult> sendBatchAsync(Collection<OutgoingMessage> messages) {
        // one scope per topic of the batch, opened on the caller's thread before anything is encoded
        Map<String, TopicSend> sends = instrumented ? startBatch(messages) : null;
        Map<SlotKeys, List<Encoded>> bySlot = new LinkedHashMap<>();
        // each message's position in the batch, beside bySlot: a batch refused part-way by a full Redis names them
        Map<SlotKeys, List<Integer>> positions = new LinkedHashMap<>();
        try (BodyCodec.Encoder encoder = codec.encoder()) {
            int position = 0;
            for (OutgoingMessage message : messages) {
                // the trace context of the message's topic's send scope (propagation on) travels as headers
                Encoded encoded = encode(message, encoder.encode(message.body()),
                        sends == null ? null : sends.get(message.topic()).context, true);
                bySlot.computeIfAbsent(encoded.slot, s -> new ArrayList<>()).add(encoded);
                positions.computeIfAbsent(encoded.slot, s -> new ArrayList<>()).add(position++);
            }
        }
        catch (RuntimeException ex) {
            if (sends != null) {
                sends.values().forEach(send -> send.scope.finished(0, 0, ex));
            }
            throw ex;
        }
        List<CompletableFuture<Long>> writes = new ArrayList<>();
        // per write (a chunk of one slot, stored all or nothing): its slot and its messages' positions
        List<SlotKeys> writeSlots = new ArrayList<>();
        List<List<Integer>> writePositions = new ArrayList<>();
        try {
            // without envelopes (ids, headers), or with bodies' trace contexts alone (trace records), every slot's
            // chunks go out as native commands written together; with them, a send.lua call per chunk
            List<BatchPart> parts = new ArrayList<>(bySlot.size());
            List<SlotKeys> partSlots = new ArrayList<>(bySlot.size());
            // per part its index in writes (in the chunks' order, as writeSlots and writePositions)
            List<Integer> partWrites = new ArrayList<>(bySlot.size());
            boolean nativeEnvelopes = redis.nativeEnvelopes();
            long started = timed ? System.nanoTime() : 0;
            bySlot.forEach((slot, group) -> {
                for (int from = 0; from < group.size(); from += CHUNK) {
                    List<Encoded> chunk = group.subList(from, Math.min(group.size(), from + CHUNK));
                    writeSlots.add(slot);
                    writePositions.add(positions.get(slot).subList(from, Math.min(group.size(), from + CHUNK)));
                    List<byte[]> contexts = contexts(chunk);
                    List<String> expiries = expiries(chunk);
                    List<byte[]> traceRecords = contexts == null ? null : traceRecords(chunk);
                    List<byte[]> envelopes = contexts == null || traceRecords != null || !nativeEnvelopes ? null
                            : idEnvelopes(chunk);
                    if (expiries == null && (contexts == null || traceRecords != null || envelopes != null)) {
                        TopicType type = chunk.get(0).type;
                        parts.add(new BatchPart(slot, type == TopicType.RANGE_MERGE,
                                type == TopicType.PRIORITY, members(chunk), parameterArray(chunk), traceRecords,
                                envelopes));
                        partSlots.add(slot);
                        partWrites.add(writes.size());
                        writes.add(null); // its place among the writes, filled once the parts are written
                    }
                    else {
                        // envelopes or expiries: send.lua writes them with the messages, atomically
                        record(sends, slot, writeWithContexts(slot, chunk, contexts, expiries), writes);
                    }
                }
            });
            if (!parts.isEmpty()) {
                List<CompletableFuture<Long>> written = redis.sendBatch(parts);
                for (int i = 0; i < written.size(); i++) {
                    SlotKeys slot = partSlots.get(i);
                    CompletableFuture<Long> write = timed ? timed(written.get(i), slot.topic(), started)
                            : written.get(i);
                    writes.set(partWrites.get(i), write);
                    if (sends != null) {
                        sends.get(slot.topic()).writes.add(write);
                    }
                }
            }
        }
        catch (RuntimeException ex) {
            if (sends != null) {
                sends.values().forEach(send -> send.scope.finished(0, 0, ex));
            }
            throw ex;
        }
        if (sends != null) {
            sends.forEach((topic, send) -> send.finishWhenWritten(instrumentation, topic));
        }
        return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).handle((v, error) -> error)
                .thenCompose(error -> {
                    if (error == null) {
                        long added = 0;
                        long deduplicated = 0;
                        for (CompletableFuture<Long> write : writes) {
                            added += RmqRedis.addedOf(write.join());
                            deduplicated += RmqRedis.deduplicatedOf(write.join());
                        }
                        return CompletableFuture.completedFuture(new BatchResult(messages.size(), added, false,
                                deduplicated));
                    }
                    return batchFull(RedisGateway.unwrap(error), messages.size(), writes, writeSlots,
                            writePositions);
                });
    }

    /**
     * A batch refused by a full Redis (in one of its writes at least) fails with {@link RmqRedisFullException} naming
     * the positions of the messages that the writes which succeeded stored; writes that failed stored nothing of their
     * chunk (a chunk is one ZADD or one send.lua call, refused at its first write). Other failures as they are.
     */
    private CompletableFuture<BatchResult> batchFull(Throwable failure, int size, List<CompletableFuture<Long>> writes,
            List<SlotKeys> writeSlots, List<List<Integer>> writePositions) {
        List<Integer> stored = new ArrayList<>();
        SlotKeys refused = null;
        for (int i = 0; i < writes.size(); i++) {
            CompletableFuture<Long> write = writes.get(i);
            if (!write.isCompletedExceptionally()) {
                stored.addAll(writePositions.get(i));
            }
            else if (refused == null && RedisFull.isOom(write.handle((r, e) -> e).join())) {
                refused = writeSlots.get(i);
            }
        }
        if (refused == null) {
            return CompletableFuture.failedFuture(failure);
        }
        java.util.Collections.sort(stored);
        String notStored = stored.isEmpty() ? "none of its " + size + " messages was stored"
                : stored.size() + " of its " + size + " messages were stored (positions " + ranges(stored)
                        + ": see storedIndexes()), the other " + (size - stored.size()) + " were NOT stored";
        return RedisFull.explain(redis.nodes(), failure, refused.store(), "a batch of " + size + " messages",
                notStored, stored).thenCompose(CompletableFuture::failedFuture);
    }

    /** "0-999, 2000-2010": sorted positions as ranges. */
    private static String ranges(List<Integer> sorted) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < sorted.size(); i++) {
            int from = sorted.get(i);
            while (i + 1 < sorted.size() && sorted.get(i + 1) == sorted.get(i) + 1) {
                i++;
            }
            out.append(out.length() == 0 ? "" : ", ").append(from)
                    .append(from == sorted.get(i) ? "" : "-" + sorted.get(i));
        }
        return out.toString();
    }

    /** A single send's call, failing with {@link RmqRedisFullException} when Redis refused it over maxmemory. */
    private <T> CompletableFuture<T> full(CompletableFuture<T> send, SlotKeys slot, String topic) {
        return send.exceptionallyCompose(error -> RedisFull.explain(redis.nodes(), error, slot.store(),
                "sending to topic '" + topic + "'", "the message was NOT stored", List.of())
                .thenCompose(CompletableFuture::failedFuture));
    }

    private Map<String, TopicSend> startBatch(Collection<OutgoingMessage> messages) {
        Map<String, int[]> counts = new LinkedHashMap<>();
        for (OutgoingMessage message : messages) {
            counts.computeIfAbsent(message.topic(), t -> new int[1])[0]++;
        }
        Map<String, TopicSend> sends = new LinkedHashMap<>();
        counts.forEach((topic, count) -> sends.put(topic,
                new TopicSend(instrumentation.sendStarted(topic, count[0]), count[0])));
        return sends;
    }

    /** One topic's part of an instrumented batch: its scope ends once all its writes have answered. */
    private static final class TopicSend {

        final SendScope scope;
        final int messages;
        /** The trace context its messages carry as headers (propagation on), or null. */
        final @Nullable Map<String, String> context;
        final List<CompletableFuture<Long>> writes = new ArrayList<>();

        TopicSend(SendScope scope, int messages) {
            this.scope = scope;
            this.messages = messages;
            this.context = scope.context();
        }

        /** Ends the scope, and reports the sends of {@code topic} a deduplication window dropped. */
        void finishWhenWritten(RmqInstrumentation instrumentation, String topic) {
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).whenComplete((v, error) -> {
                if (error != null) {
                    scope.finished(0, 0, RedisGateway.unwrap(error));
                    return;
                }
                long added = 0;
                long deduplicated = 0;
                for (CompletableFuture<Long> write : writes) {
                    added += RmqRedis.addedOf(write.join());
                    deduplicated += RmqRedis.deduplicatedOf(write.join());
                }
                scope.finished((int) added, messages - (int) added, null);
                if (deduplicated > 0) {
                    instrumentation.deduplicated(topic, deduplicated);
                }
            });
        }
    }

    /** Single sends: send.lua reports per message whether it merged. */
    private CompletableFuture<List<Long>> write(SlotKeys slot, List<Encoded> group) {
        TopicType type = group.get(0).type;
        long started = timed ? System.nanoTime() : 0;
        CompletableFuture<List<Long>> written = redis.send(slot, type == TopicType.RANGE_MERGE,
                type == TopicType.PRIORITY, members(group), parameters(group), contexts(group), expiries(group));
        return timed ? timed(written, slot.topic(), started) : written;
    }

    private static void record(Map<String, TopicSend> sends, SlotKeys slot, CompletableFuture<Long> write,
            List<CompletableFuture<Long>> writes) {
        writes.add(write);
        if (sends != null) {
            sends.get(slot.topic()).writes.add(write);
        }
    }

    /**
     * A batch's chunk whose messages carry envelopes or expiries: send.lua writes messages, envelopes and expiries
     * atomically.
     */
    private CompletableFuture<Long> writeWithContexts(SlotKeys slot, List<Encoded> group,
            @Nullable List<byte @Nullable []> contexts, @Nullable List<@Nullable String> expiries) {
        TopicType type = group.get(0).type;
        long started = timed ? System.nanoTime() : 0;
        CompletableFuture<Long> written = redis.sendCounting(slot, type == TopicType.RANGE_MERGE,
                type == TopicType.PRIORITY, members(group), parameters(group), contexts, expiries);
        return timed ? timed(written, slot.topic(), started) : written;
    }

    /** Reports one Redis call of a send ({@code operation("send")}: one per script call or batch ZADD). */
    private <R> CompletableFuture<R> timed(CompletableFuture<R> call, String topic, long started) {
        return call.whenComplete((r, error) -> instrumentation.operation("send", topic, System.nanoTime() - started,
                RedisGateway.unwrap(error)));
    }

    /** Per message its envelope, or null when no message of the group has one (the common case). */
    private static @Nullable List<byte @Nullable []> contexts(List<Encoded> group) {
        for (Encoded e : group) {
            if (e.envelope != null) {
                List<byte[]> contexts = new ArrayList<>(group.size());
                for (Encoded each : group) {
                    contexts.add(each.envelope);
                }
                return contexts;
            }
        }
        return null;
    }

    /**
     * Per message its expiry and window as send.lua takes them ('=ms', '+ms', '/ms' after either, or null), or null when
     * no message of the group has either.
     */
    private static @Nullable List<@Nullable String> expiries(List<Encoded> group) {
        for (Encoded e : group) {
            if (e.extra != null) {
                List<String> expiries = new ArrayList<>(group.size());
                for (Encoded each : group) {
                    expiries.add(each.extra);
                }
                return expiries;
            }
        }
        return null;
    }

    /**
     * The trace records (field, value, ...) of a chunk whose envelopes are all bodies' trace contexts alone (written
     * natively before the chunk's ZADD, see SendWrites); null when one message needs send.lua (an id, headers).
     */
    private static @Nullable List<byte[]> traceRecords(List<Encoded> group) {
        List<byte[]> records = new ArrayList<>(2 * group.size());
        for (Encoded e : group) {
            if (e.envelope == null) {
                continue;
            }
            if (!EnvelopeKeys.isTraceOnly(e.envelope) || EnvelopeKeys.isIdMember(e.member)) {
                return null;
            }
            byte[][] record = EnvelopeKeys.traceRecord(e.member, e.envelope);
            records.add(record[0]);
            records.add(record[1]);
        }
        return records;
    }

    /**
     * The envelopes (member, envelope, ...) of a chunk of id messages alone, written with the chunk's ZADD in one
     * MULTI (see SendWrites); null when a message is a body (its envelope key, trace record and stale record need
     * send.lua).
     */
    private static @Nullable List<byte[]> idEnvelopes(List<Encoded> group) {
        List<byte[]> envelopes = new ArrayList<>(2 * group.size());
        for (Encoded e : group) {
            if (e.envelope == null || !EnvelopeKeys.isIdMember(e.member)) {
                return null;
            }
            envelopes.add(e.member);
            envelopes.add(e.envelope);
        }
        return envelopes;
    }

    private static List<byte[]> members(List<Encoded> group) {
        List<byte[]> members = new ArrayList<>(group.size());
        for (Encoded e : group) {
            members.add(e.member);
        }
        return members;
    }

    private static long[] parameterArray(List<Encoded> group) {
        long[] parameters = new long[group.size()];
        for (int i = 0; i < parameters.length; i++) {
            parameters[i] = group.get(i).parameter;
        }
        return parameters;
    }

    private static List<Long> parameters(List<Encoded> group) {
        List<Long> parameters = new ArrayList<>(group.size());
        for (Encoded e : group) {
            parameters.add(e.parameter);
        }
        return parameters;
    }

    /**
     * Validates a message whose body was serialized to {@code payload}, makes its member (the body, or the tagged id)
     * and envelope (payload of an id message, headers, the trace context), and routes it to its slot: by its group,
     * else its id, else its body. The group of a message to an ORDERLY topic is stored too (the ORDERLY scripts read
     * it): in a body's member ({@link EnvelopeKeys#groupedMember}), as an id message's first envelope header
     * {@link Envelope#GROUP}; not for other topics. A topic known here without a mode is looked up in Redis now and
     * then ({@link ModeLookups}): its grouped messages go without their group until the mode is known (the consumer
     * takes those in slot order).
     */
    private Encoded encode(OutgoingMessage message, byte[] payload, @Nullable Map<String, String> context,
            boolean limited) {
        TopicDefinition topic = topics.get(message.topic());
        if (topic.type() != message.type()) {
            throw new RmqInvalidArgumentException("type", message.type(), "does not match " + topic.describe()
                    + "; send " + topic.type() + " messages to it");
        }
        if (limited && payload.length > maxBodyBytes) {
            throw new RmqInvalidArgumentException("body", payload.length + " bytes",
                    "must be at most " + maxBodyBytes + " bytes after serialization (rmq.max-body-size; topic '"
                            + topic.name() + "')");
        }
        if (payload.length == 0) {
            throw new RmqInvalidArgumentException("body", "0 bytes", "must not be empty (topic '" + topic.name() + "')");
        }
        String id = message.id();
        byte[] member;
        byte[] routing;
        if (id == null) {
            int first = payload[0] & 0xFF;
            if (first == EnvelopeKeys.ID_TAG || first == EnvelopeKeys.GROUP_TAG) {
                throw new RmqInvalidArgumentException("body", "starting with byte 0x" + Integer.toHexString(first)
                        .toUpperCase(java.util.Locale.ROOT), "is reserved for stored ids and groups (0xFE, 0xFF):"
                        + " send this body with an id, or encoded (e.g. Base64) (topic '" + topic.name() + "')");
            }
            member = payload;
            routing = payload;
        }
        else {
            routing = id.getBytes(StandardCharsets.UTF_8);
            if (limited && routing.length > limits.maxIdBytes()) {
                throw new RmqInvalidArgumentException("id", cut(id) + " (" + routing.length + " bytes)",
                        "must be at most " + limits.maxIdBytes() + " bytes (rmq.max-id-size; topic '" + topic.name()
                                + "')");
            }
            member = EnvelopeKeys.idMemberOf(routing);
        }
        Map<String, String> headers = message.headers();
        if (limited && !headers.isEmpty()) {
            checkHeaderSizes(topic.name(), headers);
        }
        String group = message.group();
        boolean storeGroup = false;
        if (group != null) {
            ConsumeMode mode = topic.mode();
            if (mode == null) {
                modes.lookUp(topic.name());
            }
            storeGroup = mode == ConsumeMode.ORDERLY;
        }
        if (storeGroup && id == null) {
            // in the member, where the ORDERLY scripts read it with no envelope to digest, look up or forget
            member = EnvelopeKeys.groupedMember(group, payload);
            storeGroup = false;
        }
        if (storeGroup || (context != null && !context.isEmpty())) {
            // an id message's group first (the ORDERLY scripts look for it there), then the user's headers, then the
            // propagator's entries (traceparent, tracestate, baggage), which win over user headers of the same name
            Map<String, String> merged = new LinkedHashMap<>(headers.size() + 4);
            if (storeGroup) {
                merged.put(Envelope.GROUP, group);
            }
            merged.putAll(headers);
            if (context != null) {
                merged.putAll(context);
            }
            headers = merged;
        }
        byte[] envelope = Envelope.encode(id == null ? null : payload, headers);
        SlotKeys slot = redis.keys().slots(topic)[SlotRouter.slot(routing, message.group(), topic.slotAmount())];
        String expiry = message.expiresAt() != null ? "=" + message.expiresAt().toEpochMilli()
                : message.expiresAfter() != null ? "+" + message.expiresAfter().toMillis() : null;
        String extra = message.dedupeFor() == null ? expiry
                : (expiry == null ? "" : expiry) + "/" + message.dedupeFor().toMillis();
        return new Encoded(slot, topic.type(), member, message.parameter(), envelope, extra);
    }

    /**
     * The user's limits, on the user's headers: RMQ's own ({@link OutgoingMessage#DEAD_LETTER_HEADERS}) do not count
     * towards them (forwarding adds up to six to a message that was within them), each value of those at most
     * {@link OutgoingMessage#MAX_DEAD_LETTER_HEADER_BYTES} instead.
     */
    private void checkHeaderSizes(String topic, Map<String, String> headers) {
        int count = 0;
        long total = 0;
        for (Map.Entry<String, String> header : headers.entrySet()) {
            int valueBytes = Utf8.length(header.getValue());
            if (OutgoingMessage.DEAD_LETTER_HEADERS.contains(header.getKey())) {
                if (valueBytes > OutgoingMessage.MAX_DEAD_LETTER_HEADER_BYTES) {
                    throw new RmqInvalidArgumentException("header '" + header.getKey() + "' value", valueBytes
                            + " bytes", "must be at most " + OutgoingMessage.MAX_DEAD_LETTER_HEADER_BYTES
                            + " bytes (an RMQ dead-letter header; topic '" + topic + "')");
                }
                continue;
            }
            count++;
            int nameBytes = Utf8.length(header.getKey());
            if (valueBytes > limits.maxHeaderValueBytes()) {
                throw new RmqInvalidArgumentException("header '" + header.getKey() + "' value", valueBytes + " bytes",
                        "must be at most " + limits.maxHeaderValueBytes() + " bytes (rmq.max-header-value-size; topic '"
                                + topic + "')");
            }
            if (nameBytes > limits.maxHeaderValueBytes()) {
                throw new RmqInvalidArgumentException("header name", cut(header.getKey()) + " (" + nameBytes + " bytes)",
                        "must be at most " + limits.maxHeaderValueBytes() + " bytes (rmq.max-header-value-size; topic '"
                                + topic + "')");
            }
            total += nameBytes + valueBytes;
        }
        if (count > limits.maxHeaders()) {
            throw new RmqInvalidArgumentException("headers", count + " headers", "must be at most "
                    + limits.maxHeaders() + " per message (rmq.max-headers; topic '" + topic + "')");
        }
        if (total > limits.maxHeadersBytes()) {
            throw new RmqInvalidArgumentException("headers", total + " bytes", "must be at most "
                    + limits.maxHeadersBytes() + " bytes, names and values together (rmq.max-headers-size; topic '"
                    + topic + "')");
        }
    }

    @Override
    public int validate(OutgoingMessage message) {
        return encode(message, codec.encode(message.body()), null, true).slot.slot();
    }

    /** A value as an error message shows it: at most 64 characters. */
    private static String cut(String value) {
        return value.length() <= 64 ? value : value.substring(0, 64) + "…";
    }

    /**
     * @param envelope the message's {@link Envelope}, or null (a plain message: its member is all there is)
     * @param extra    send.lua's field for its expiry ('=' Redis ms, or '+' ms after it is stored) and deduplication
     *                 window ('/' ms), or null for neither
     */
    private record Encoded(SlotKeys slot, TopicType type, byte[] member, long parameter, byte @Nullable [] envelope,
            @Nullable String extra) {
    }
}
