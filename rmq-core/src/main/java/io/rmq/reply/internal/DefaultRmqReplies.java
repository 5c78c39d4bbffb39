package io.rmq.reply.internal;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.sync.RedisListCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.rmq.core.BodyCodec;
import io.rmq.core.RmqException;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.RmqTimeoutException;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.RmqProducer;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.reply.RmqReplies;
import io.rmq.reply.RmqReplyFailureException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.exc.InvalidDefinitionException;

/**
 * {@link RmqReplies} on this engine's Redis: one inbox per engine, taken by the inbox thread {@code rmq-replies} while
 * requests wait.
 * <p>
 * Threads: {@link #request} runs on its caller's thread; the inbox thread takes the replies off Redis (a blocking pop
 * on a connection of its own, only while requests wait: an engine that sends none costs Redis nothing) and completes
 * the futures; timeouts fire on {@code rmq-reply-timeouts}; {@link #reply} runs on handler threads.
 */
public final class DefaultRmqReplies implements RmqReplies {

    /** Longest value of a failure sent back, in characters. */
    static final int MOST_FAILURE_CHARS = 1024;
    /** How long one blocking pop waits (s): the longest the inbox thread takes to notice its engine closing. */
    private static final long WAIT_SECONDS = 1;
    private static final byte OK = '0';
    private static final byte FAILED = '1';
    /** A reply without a value (the handler returned null, or nothing). */
    private static final byte NONE = '2';

    private static final Logger log = LoggerFactory.getLogger(DefaultRmqReplies.class);

    private final AbstractRedisClient client;
    private final RmqRedis redis;
    private final RmqProducer producer;
    private final BodyCodec codec;
    private final String inboxId = UUID.randomUUID().toString();
    private final byte[] inbox;
    /** The requests waiting for their reply, by correlation id. */
    private final Map<String, Pending<?>> pending = new ConcurrentHashMap<>();
    /** Reply types checked to be readable (see {@link #checkReadable}). */
    private final Map<Type, Boolean> readable = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    /** The inbox thread, started by the first request; guarded by {@link #lock}. */
    private @Nullable Thread thread;
    private final ScheduledThreadPoolExecutor timeouts;
    /** The inbox thread's connection; opened and closed by that thread (and closed by {@link #close}). */
    private volatile @Nullable StatefulConnection<byte[], byte[]> connection;
    private volatile boolean closed;

    /** Made by the {@link io.rmq.Rmq} facade. */
    public DefaultRmqReplies(AbstractRedisClient client, RmqRedis redis, RmqProducer producer, BodyCodec codec) {
        this.client = client;
        this.redis = redis;
        this.producer = producer;
        this.codec = codec;
        this.inbox = redis.keys().replyInbox(inboxId);
        this.timeouts = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread t = new Thread(runnable, "rmq-reply-timeouts");
            t.setDaemon(true);
            return t;
        });
        timeouts.setRemoveOnCancelPolicy(true);
    }

    @Override
    public String inboxId() {
        return inboxId;
    }

    @Override
    public <R> CompletableFuture<R> request(OutgoingMessage request, Type replyType, Duration timeout,
            boolean failuresBack) {
        OutgoingMessage message = requestMessage(request, replyType, timeout, failuresBack,
                RmqReplies.newCorrelationId());
        return send(message, replyType, timeout);
    }

    @Override
    public OutgoingMessage requestMessage(OutgoingMessage request, Type replyType, Duration timeout,
            boolean failuresBack, String correlationId) {
        if (request == null) {
            throw new RmqInvalidArgumentException("request", null, "must not be null");
        }
        if (replyType == null) {
            throw new RmqInvalidArgumentException("replyType", null, "must be set: the type the reply is read as"
                    + " (Object.class: as JSON reads it) (topic '" + request.topic() + "')");
        }
        if (timeout == null || timeout.isNegative() || timeout.toMillis() < 1) {
            throw new RmqInvalidArgumentException("timeout", timeout, "must be at least 1 ms (topic '"
                    + request.topic() + "')");
        }
        if (request.id() != null) {
            throw new RmqInvalidArgumentException("id", request.id(), "must not be set on a request: its id is its"
                    + " correlation id, so that two requests never merge (topic '" + request.topic() + "')");
        }
        checkReadable(replyType, request.topic());
        OutgoingMessage message = request.withId(correlationId)
                .withHeader(OutgoingMessage.CORRELATION_ID_HEADER, correlationId)
                .withHeader(OutgoingMessage.REPLY_TO_HEADER, inboxId)
                .withHeader(OutgoingMessage.REPLY_TIMEOUT_HEADER, Long.toString(timeout.toMillis()));
        if (failuresBack) {
            message = message.withHeader(OutgoingMessage.REPLY_FAILURES_HEADER, "true");
        }
        return message.expires() ? message : message.expiresAfter(timeout);
    }

    @Override
    public <R> CompletableFuture<R> send(OutgoingMessage message, Type replyType, Duration timeout) {
        String correlationId = message.headers().get(OutgoingMessage.CORRELATION_ID_HEADER);
        if (correlationId == null || !inboxId.equals(message.headers().get(OutgoingMessage.REPLY_TO_HEADER))) {
            throw new RmqInvalidArgumentException("message", message.topic(), "must be made by requestMessage of"
                    + " this engine (it carries no correlation id or another inbox)");
        }
        if (closed) {
            throw new RmqException("RMQ is closed: no request can be sent");
        }
        CompletableFuture<R> reply = new CompletableFuture<>();
        Pending<R> waiting = new Pending<>(reply, replyType, message.topic(), correlationId);
        // registered before the send: a fast handler's reply may come before the send's answer
        pending.put(correlationId, waiting);
        reply.whenComplete((r, error) -> {
            pending.remove(correlationId, waiting);
            ScheduledFuture<?> timer = waiting.timer;
            if (timer != null) {
                timer.cancel(false);
            }
        });
        wake();
        try {
            producer.sendAsync(message).whenComplete((sent, error) -> {
                if (error != null) {
                    reply.completeExceptionally(io.rmq.redis.internal.RedisGateway.unwrap(error));
                }
                else {
                    timeOut(waiting, timeout);
                }
            });
        }
        catch (RuntimeException ex) {
            reply.completeExceptionally(ex);
            throw ex;
        }
        return reply;
    }

    /**
     * Starts the request's timeout once it is stored: its expiry ({@code timeout} after Redis stored it) has then passed
     * when the requester gives up, so no listener takes it afterwards, however long the send took.
     */
    private <R> void timeOut(Pending<R> waiting, Duration timeout) {
        CompletableFuture<R> reply = waiting.reply;
        ScheduledFuture<?> timer = timeouts.schedule(() -> reply.completeExceptionally(new RmqTimeoutException(
                "no reply to request " + waiting.correlationId + " on topic '" + waiting.topic + "' within " + timeout
                        + " (its handler failed, is slow, or no listener took it)")),
                timeout.toMillis(), TimeUnit.MILLISECONDS);
        waiting.timer = timer;
        if (reply.isDone()) {
            timer.cancel(false); // answered before the send's reply came: the completion ran without a timer to cancel
        }
    }

    @Override
    public CompletableFuture<Boolean> reply(Map<String, ?> requestHeaders, @Nullable Object value) {
        if (!RmqReplies.isRequest(requestHeaders)) {
            return CompletableFuture.completedFuture(false);
        }
        return value == null ? write(requestHeaders, NONE, new byte[0])
                : write(requestHeaders, OK, codec.encode(value));
    }

    @Override
    public CompletableFuture<Boolean> replyFailure(Map<String, ?> requestHeaders, Throwable failure) {
        if (!RmqReplies.wantsFailures(requestHeaders)) {
            return CompletableFuture.completedFuture(false);
        }
        String text = failure.getClass().getName() + ": " + failure.getMessage();
        if (text.length() > MOST_FAILURE_CHARS) {
            text = text.substring(0, MOST_FAILURE_CHARS) + "…";
        }
        return write(requestHeaders, FAILED, text.getBytes(StandardCharsets.UTF_8));
    }

    private CompletableFuture<Boolean> write(Map<String, ?> requestHeaders, byte status, byte[] payload) {
        byte[] correlation = ((String) requestHeaders.get(OutgoingMessage.CORRELATION_ID_HEADER))
                .getBytes(StandardCharsets.UTF_8);
        byte[] record = new byte[correlation.length + 2 + payload.length];
        System.arraycopy(correlation, 0, record, 0, correlation.length);
        record[correlation.length] = 0;
        record[correlation.length + 1] = status;
        System.arraycopy(payload, 0, record, correlation.length + 2, payload.length);
        byte[] target = redis.keys().replyInbox((String) requestHeaders.get(OutgoingMessage.REPLY_TO_HEADER));
        return redis.reply(target, record, keepUntaken(requestHeaders.get(OutgoingMessage.REPLY_TIMEOUT_HEADER)),
                MOST_UNTAKEN).thenApply(length -> true);
    }

    /** How long a reply is kept untaken: its request's timeout, at least 1 s, at most {@link #KEEP_UNTAKEN}. */
    static long keepUntaken(@Nullable Object timeoutHeader) {
        long keep = KEEP_UNTAKEN.toMillis();
        if (timeoutHeader instanceof String text) {
            try {
                keep = Long.parseLong(text);
            }
            catch (NumberFormatException ex) {
                // not a number: the longest
            }
        }
        return Math.max(1000, Math.min(keep, KEEP_UNTAKEN.toMillis()));
    }

    /**
     * A type Jackson cannot read at all (an interface or abstract class without type information, a class without a
     * creator) is refused before anything is sent: its reply could never be read.
     */
    private void checkReadable(Type type, String topic) {
        if (type == byte[].class || type == String.class || type == Object.class || readable.containsKey(type)) {
            return;
        }
        try {
            codec.readMapper().readerFor(codec.readMapper().constructType(type)).readValue("{}");
        }
        catch (InvalidDefinitionException ex) {
            throw new RmqInvalidArgumentException("replyType", type.getTypeName(), "cannot be read from a reply: "
                    + ex.getOriginalMessage() + " (topic '" + topic + "')");
        }
        catch (RuntimeException ex) {
            // "{}" is not this type's JSON (a number, a list, a record with required fields): the type itself is fine
        }
        readable.put(type, Boolean.TRUE);
    }

    /** Starts the inbox thread, or wakes it from its wait for requests. */
    private void wake() {
        synchronized (lock) {
            if (thread == null && !closed) {
                Thread t = new Thread(this::takeReplies, "rmq-replies");
                t.setDaemon(true);
                thread = t;
                t.start();
            }
            lock.notifyAll();
        }
    }

    /** The inbox thread: while requests wait, takes their replies off the inbox as they come. */
    private void takeReplies() {
        while (!closed) {
            try {
                synchronized (lock) {
                    while (pending.isEmpty() && !closed) {
                        lock.wait();
                    }
                }
                if (closed) {
                    return;
                }
                RedisListCommands<byte[], byte[]> commands = commands();
                KeyValue<byte[], byte[]> first = commands.blpop(WAIT_SECONDS, inbox);
                if (first != null && first.hasValue()) {
                    take(first.getValue());
                    List<byte[]> more;
                    while (!(more = commands.lpop(inbox, 100)).isEmpty()) {
                        more.forEach(this::take);
                    }
                }
            }
            catch (InterruptedException ex) {
                return;
            }
            catch (RuntimeException ex) {
                if (closed) {
                    return;
                }
                // Redis unreachable or failing over: the replies wait in the inbox (kept KEEP_UNTAKEN)
                log.debug("RMQ could not take replies from its inbox; trying again", ex);
                closeConnection();
                try {
                    Thread.sleep(200);
                }
                catch (InterruptedException interrupted) {
                    return;
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private RedisListCommands<byte[], byte[]> commands() {
        StatefulConnection<byte[], byte[]> open = connection;
        if (open == null || !open.isOpen()) {
            open = client instanceof RedisClusterClient cluster ? cluster.connect(ByteArrayCodec.INSTANCE)
                    : ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
            connection = open;
        }
        if (open instanceof io.lettuce.core.cluster.api.StatefulRedisClusterConnection<?, ?> cluster) {
            return ((io.lettuce.core.cluster.api.StatefulRedisClusterConnection<byte[], byte[]>) cluster).sync();
        }
        return ((io.lettuce.core.api.StatefulRedisConnection<byte[], byte[]>) open).sync();
    }

    private void closeConnection() {
        StatefulConnection<byte[], byte[]> open = connection;
        connection = null;
        if (open != null) {
            try {
                open.close();
            }
            catch (RuntimeException ex) {
                log.debug("RMQ could not close its reply connection", ex);
            }
        }
    }

    /** One reply off the inbox: completes its request's future, or is dropped when nobody waits for it any more. */
    private void take(byte[] record) {
        int at = 0;
        while (at < record.length && record[at] != 0) {
            at++;
        }
        if (at + 2 > record.length) {
            log.warn("RMQ dropped a reply it cannot read from its inbox ({} bytes)", record.length);
            return;
        }
        String correlationId = new String(record, 0, at, StandardCharsets.UTF_8);
        Pending<?> waiting = pending.remove(correlationId);
        if (waiting == null) {
            log.debug("RMQ dropped a late reply to request {}: its requester no longer waits (timed out or cancelled)",
                    correlationId);
            return;
        }
        byte[] payload = java.util.Arrays.copyOfRange(record, at + 2, record.length);
        waiting.complete(record[at + 1], payload, codec);
    }

    @Override
    public void close() {
        Thread t;
        synchronized (lock) {
            closed = true;
            t = thread;
            lock.notifyAll();
        }
        timeouts.shutdownNow();
        RmqException closing = new RmqException("RMQ was closed before the reply came");
        pending.values().forEach(waiting -> waiting.reply.completeExceptionally(closing));
        pending.clear();
        if (t != null) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS) + 500);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            closeConnection();
            try {
                // replies still on their way expire with the inbox; those there now go at once
                redis.forget(inbox).get(2, TimeUnit.SECONDS);
            }
            catch (Exception ex) {
                log.debug("RMQ could not delete its reply inbox; it expires by itself", ex);
            }
        }
    }

    /** A request waiting for its reply. */
    private static final class Pending<R> {

        final CompletableFuture<R> reply;
        final Type type;
        final String topic;
        final String correlationId;
        volatile @Nullable ScheduledFuture<?> timer;

        Pending(CompletableFuture<R> reply, Type type, String topic, String correlationId) {
            this.reply = reply;
            this.type = type;
            this.topic = topic;
            this.correlationId = correlationId;
        }

        void complete(byte status, byte[] payload, BodyCodec codec) {
            if (status == FAILED) {
                reply.completeExceptionally(new RmqReplyFailureException(topic, correlationId,
                        new String(payload, StandardCharsets.UTF_8)));
                return;
            }
            if (status == NONE) {
                reply.complete(null);
                return;
            }
            R value;
            try {
                value = codec.decode(payload, type);
            }
            catch (RuntimeException ex) {
                reply.completeExceptionally(new RmqException("the reply to request " + correlationId + " on topic '"
                        + topic + "' cannot be read as " + type.getTypeName() + ": " + ex.getMessage(), ex));
                return;
            }
            reply.complete(value);
        }
    }
}
