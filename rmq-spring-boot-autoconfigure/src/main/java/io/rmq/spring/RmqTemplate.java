package io.rmq.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.rmq.Rmq;
import io.rmq.admin.RmqAdmin;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.producer.BatchResult;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import org.jspecify.annotations.Nullable;
import org.springframework.messaging.Message;
import org.springframework.util.ClassUtils;

/**
 * Sends messages, and operates queues through {@link #admin()}: the one RMQ bean application code needs. Thread-safe.
 * <p>
 * Each send validates its input at once (topic defined, parameter valid for the topic type, body within
 * {@code rmq.max-body-size}, id and headers within {@code rmq.max-id-size}, {@code rmq.max-header-value-size},
 * {@code rmq.max-headers-size} and {@code rmq.max-headers}) and throws {@link io.rmq.core.RmqInvalidArgumentException}
 * naming the field, the value and the rule; nothing is written then. Async and batch sends pipeline their Redis
 * commands.
 * <p>
 * A message's identity is its body unless it is sent with an id: build an {@link OutgoingMessage} with
 * {@link OutgoingMessage#withId(String) withId}, or send a Spring {@link Message} with an {@link RmqHeaders#ID} header.
 * Sends of one identity merge; the payload and headers delivered are those of the latest send. The {@code group}
 * (formerly "slot basis") is the routing and ordering key: messages of
 * one group share a slot, so an ORDERLY listener handles them in order.
 * <p>
 * Inside a Spring transaction (with spring-tx on the class path, as it is with Spring Data Redis), sends follow the
 * transaction ({@link RmqTransactionMode#AFTER_COMMIT}, the default; {@code rmq.template.transaction-mode}): each send
 * is checked and its body serialized when it is made, then held, written in call order once the transaction has
 * committed, and dropped when it rolls back. A synchronous send then returns a result that says
 * {@link SendResult#held() held} (a batch: {@link BatchResult#held()}) and the commit waits for its write, as the send
 * would have; an async send's future completes when its write after the commit does, or with
 * {@link RmqSendDiscardedException} when the transaction rolls back. A write that fails after the commit goes to the
 * {@link RmqSendFailureHandler}. {@link #immediate()} writes at once, in a transaction or not.
 */
public class RmqTemplate {

    /** Sends follow transactions only where Spring's transaction support is present. */
    private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            RmqTemplate.class.getClassLoader());

    private final Rmq rmq;
    private final boolean typeHeader;
    private final RmqTransactionMode transactionMode;
    /** Null when every send is written at once. */
    private final @Nullable TransactionHeldSends heldSends;
    private final RmqTemplate immediate;
    /** Per topic, how long after it is stored a message without an expiry of its own expires. */
    private final Map<String, Duration> expireAfter;
    /** Per topic, the deduplication window of a message without one of its own. */
    private final Map<String, Duration> dedupeFor;

    public RmqTemplate(Rmq rmq) {
        this(rmq, false);
    }

    /**
     * @param typeHeader whether each send adds {@link RmqHeaders#TYPE_ID} (the payload's class name) unless the message
     *                   has one, for a class-level listener's {@code @RmqHandler} choice
     *                   ({@code rmq.producer.type-header}); {@code String} and {@code byte[]} payloads, stored as they
     *                   are, get none
     */
    public RmqTemplate(Rmq rmq, boolean typeHeader) {
        this(rmq, typeHeader, RmqTransactionMode.AFTER_COMMIT, RmqSendFailureHandler.logging());
    }

    /**
     * @param typeHeader      see {@link #RmqTemplate(Rmq, boolean)}
     * @param transactionMode what a send made inside a Spring transaction does ({@code rmq.template.transaction-mode})
     * @param failureHandler  told about each message held until its transaction committed whose write then failed
     */
    public RmqTemplate(Rmq rmq, boolean typeHeader, RmqTransactionMode transactionMode,
            RmqSendFailureHandler failureHandler) {
        this(rmq, typeHeader, transactionMode, failureHandler, Map.of());
    }

    /**
     * @param expireAfter per topic, how long after it is stored a message sent to it expires unless it sets an expiry
     *                    of its own ({@code rmq.topics.<name>.expire-after}; see {@link OutgoingMessage#expiresAfter})
     */
    public RmqTemplate(Rmq rmq, boolean typeHeader, RmqTransactionMode transactionMode,
            RmqSendFailureHandler failureHandler, Map<String, Duration> expireAfter) {
        this(rmq, typeHeader, transactionMode, failureHandler, expireAfter, Map.of());
    }

    /**
     * @param dedupeFor per topic, the deduplication window of a message sent to it unless it sets one of its own
     *                  ({@code rmq.topics.<name>.dedupe-for}; see {@link OutgoingMessage#dedupeFor})
     */
    public RmqTemplate(Rmq rmq, boolean typeHeader, RmqTransactionMode transactionMode,
            RmqSendFailureHandler failureHandler, Map<String, Duration> expireAfter, Map<String, Duration> dedupeFor) {
        if (transactionMode == null) {
            throw new RmqInvalidArgumentException("transactionMode", null, "must be AFTER_COMMIT or IMMEDIATE");
        }
        if (failureHandler == null) {
            throw new RmqInvalidArgumentException("failureHandler", null,
                    "must be set (RmqSendFailureHandler.logging() logs)");
        }
        this.rmq = rmq;
        this.typeHeader = typeHeader;
        this.expireAfter = Map.copyOf(expireAfter);
        this.dedupeFor = Map.copyOf(dedupeFor);
        this.transactionMode = transactionMode;
        boolean follows = transactionMode == RmqTransactionMode.AFTER_COMMIT && TRANSACTIONS_PRESENT;
        this.heldSends = follows ? new TransactionHeldSends(failureHandler) : null;
        this.immediate = transactionMode == RmqTransactionMode.IMMEDIATE ? this
                : new RmqTemplate(rmq, typeHeader, RmqTransactionMode.IMMEDIATE, failureHandler, expireAfter, dedupeFor);
    }

    /**
     * This template writing every send at once, also inside a transaction: for a message that must go out whether the
     * transaction commits or not (an audit trail, a notice of the failure being handled). Same engine and settings;
     * everything but sending is the same as on this template. With {@link RmqTransactionMode#IMMEDIATE}, this template.
     */
    public RmqTemplate immediate() {
        return immediate;
    }

    /** What a send made inside a Spring transaction does. */
    public RmqTransactionMode getTransactionMode() {
        return transactionMode;
    }

    // ------------------------------------------------------------------ sending

    /** RANGE_MERGE: delivered {@code timeRange} after the first send; identical bodies sent meanwhile merge into it. */
    public SendResult sendRangeMerge(String topic, Object body, Duration timeRange) {
        return send(OutgoingMessage.rangeMerge(topic, body, timeRange));
    }

    /** As {@link #sendRangeMerge(String, Object, Duration)}, in {@code group} (the routing key; formerly slotBasis). */
    public SendResult sendRangeMerge(String topic, Object body, Duration timeRange, String group) {
        return send(OutgoingMessage.rangeMerge(topic, body, timeRange).withGroup(group));
    }

    /**
     * RANGE_MERGE for a Spring {@link Message}: its payload is the body, its {@link RmqHeaders#ID} header (if any) the
     * id, {@link RmqHeaders#GROUP} the group, its other headers the message's (string values only; Spring's
     * {@code id}, {@code timestamp} and {@code contentType} are left out). Delivered {@code timeRange} after the first
     * send of its identity, with the payload and headers of the latest.
     */
    public SendResult sendRangeMerge(String topic, Message<?> message, Duration timeRange) {
        return send(SpringMessageMapping.withHeadersOf(OutgoingMessage.rangeMerge(topic, payload(topic, message),
                timeRange), message));
    }

    /** PRIORITY: higher first; an identical waiting body merges and takes this priority. */
    public SendResult sendPriority(String topic, Object body, long priority) {
        return send(OutgoingMessage.priority(topic, body, priority));
    }

    /** As {@link #sendPriority(String, Object, long)}, in {@code group} (the routing key; formerly slotBasis). */
    public SendResult sendPriority(String topic, Object body, long priority, String group) {
        return send(OutgoingMessage.priority(topic, body, priority).withGroup(group));
    }

    /**
     * PRIORITY for a Spring {@link Message}, mapped as {@link #sendRangeMerge(String, Message, Duration)} says; a
     * waiting message of its identity takes this priority, payload and headers.
     */
    public SendResult sendPriority(String topic, Message<?> message, long priority) {
        return send(SpringMessageMapping.withHeadersOf(OutgoingMessage.priority(topic, payload(topic, message), priority),
                message));
    }

    /**
     * FIXED_TIME: delivered at {@code fixedTime} (a time at or before now is due at once); an identical waiting body
     * takes this time.
     */
    public SendResult sendFixedTime(String topic, Object body, Instant fixedTime) {
        return send(OutgoingMessage.fixedTime(topic, body, fixedTime));
    }

    /** As {@link #sendFixedTime(String, Object, Instant)}, in {@code group} (the routing key; formerly slotBasis). */
    public SendResult sendFixedTime(String topic, Object body, Instant fixedTime, String group) {
        return send(OutgoingMessage.fixedTime(topic, body, fixedTime).withGroup(group));
    }

    /**
     * FIXED_TIME for a Spring {@link Message}, mapped as {@link #sendRangeMerge(String, Message, Duration)} says; a
     * waiting message of its identity takes this time, payload and headers.
     */
    public SendResult sendFixedTime(String topic, Message<?> message, Instant fixedTime) {
        return send(SpringMessageMapping.withHeadersOf(OutgoingMessage.fixedTime(topic, payload(topic, message),
                fixedTime), message));
    }

    /**
     * Sends one message; inside a transaction (see the class comment) checks it, holds it until the commit and returns
     * a {@link SendResult#held() held} result.
     */
    public SendResult send(OutgoingMessage message) {
        OutgoingMessage typed = typed(message);
        TransactionHeldSends held = holding();
        if (held != null) {
            OutgoingMessage checked = serialized(typed);
            int slot = rmq.producer().validate(checked);
            held.hold(List.of(checked), () -> rmq.producer().sendAsync(checked), true);
            return SendResult.held(checked.topic(), slot);
        }
        return rmq.producer().send(typed);
    }

    /**
     * Sends one message without waiting; input errors are thrown at once. Inside a transaction (see the class comment)
     * the future completes when the write after the commit does, or with {@link RmqSendDiscardedException}.
     */
    public CompletableFuture<SendResult> sendAsync(OutgoingMessage message) {
        OutgoingMessage typed = typed(message);
        TransactionHeldSends held = holding();
        if (held != null) {
            OutgoingMessage checked = serialized(typed);
            rmq.producer().validate(checked);
            return held.hold(List.of(checked), () -> rmq.producer().sendAsync(checked), false);
        }
        return rmq.producer().sendAsync(typed);
    }

    /**
     * Validates all, then writes grouped by slot with one multi-member command per slot, pipelined. Inside a
     * transaction (see the class comment) checks all, holds the batch until the commit and returns a
     * {@link BatchResult#held() held} result.
     */
    public BatchResult sendBatch(Collection<OutgoingMessage> messages) {
        Collection<OutgoingMessage> typed = typed(messages);
        TransactionHeldSends held = holding();
        if (held != null) {
            List<OutgoingMessage> checked = checked(typed);
            held.hold(checked, () -> rmq.producer().sendBatchAsync(checked), true);
            return BatchResult.held(checked.size());
        }
        return rmq.producer().sendBatch(typed);
    }

    /**
     * As {@link #sendBatch} without waiting. Inside a transaction the future completes when the write after the commit
     * does, or with {@link RmqSendDiscardedException}.
     */
    public CompletableFuture<BatchResult> sendBatchAsync(Collection<OutgoingMessage> messages) {
        Collection<OutgoingMessage> typed = typed(messages);
        TransactionHeldSends held = holding();
        if (held != null) {
            List<OutgoingMessage> checked = checked(typed);
            return held.hold(checked, () -> rmq.producer().sendBatchAsync(checked), false);
        }
        return rmq.producer().sendBatchAsync(typed);
    }

    // ------------------------------------------------------------------ request-reply

    /**
     * Sends {@code payload} to {@code topic} as a request and waits for the reply: what the {@code @RmqListener} method
     * that handled it returned (null when it returned nothing), read as {@code replyType}. The request is due at once
     * (PRIORITY: priority 0; FIXED_TIME: now; RANGE_MERGE: 1 ms after it is stored), never merges with another, and
     * expires after {@code timeout}, so no listener handles it once its requester gave up. See
     * {@link #sendAndReceive(OutgoingMessage, Class, Duration, boolean)}.
     *
     * @throws io.rmq.core.RmqTimeoutException when no reply came within {@code timeout}
     */
    public <R> @Nullable R sendAndReceive(String topic, Object payload, Class<R> replyType, Duration timeout) {
        return sendAndReceive(request(topic, payload), replyType, timeout, false);
    }

    /** As {@link #sendAndReceive(String, Object, Class, Duration)}, without waiting: the future of the reply. */
    public <R> CompletableFuture<R> sendAndReceiveAsync(String topic, Object payload, Class<R> replyType,
            Duration timeout) {
        return sendAndReceiveAsync(request(topic, payload), replyType, timeout, false);
    }

    /** As {@link #sendAndReceive(OutgoingMessage, Class, Duration, boolean)}, failures not sent back. */
    public <R> @Nullable R sendAndReceive(OutgoingMessage request, Class<R> replyType, Duration timeout) {
        return sendAndReceive(request, replyType, timeout, false);
    }

    /**
     * Sends {@code request} (a message of any type, without an id: its correlation id becomes its id) and waits for
     * the reply of the {@code @RmqListener} method that handles it, on this or any other instance: what the method
     * returned, read as {@code replyType} (null when it returned nothing). Unless it has an expiry of its own, the
     * request expires {@code timeout} after Redis stored it, and the wait counts from then too (the send's time comes
     * on top), so no listener takes it once its requester gave up. A reply that comes later is dropped.
     * <p>
     * A handler that throws: by default the request fails as any message does (retried, then dead) and this call
     * times out; with {@code failuresBack}, the failure comes back at once as
     * {@link io.rmq.reply.RmqReplyFailureException} and the request is not retried.
     * <p>
     * Inside a transaction this template follows (after-commit mode) the request would only be sent after the commit,
     * so this call cannot wait for it: it fails with {@link IllegalStateException}; use
     * {@link #sendAndReceiveAsync(OutgoingMessage, Class, Duration, boolean)} (sent after the commit, its timeout
     * counted from then) or {@code immediate().sendAndReceive(...)} (sent now).
     *
     * @throws io.rmq.core.RmqTimeoutException         when no reply came within {@code timeout}
     * @throws io.rmq.reply.RmqReplyFailureException  when {@code failuresBack} and the handler failed
     * @throws io.rmq.core.RmqInvalidArgumentException for a bad request, reply type or timeout (nothing is sent)
     */
    public <R> @Nullable R sendAndReceive(OutgoingMessage request, Class<R> replyType, Duration timeout,
            boolean failuresBack) {
        if (holding() != null) {
            throw new IllegalStateException("sendAndReceive to topic '" + request.topic() + "' inside a transaction:"
                    + " the request is sent only after the transaction commits (rmq.template.transaction-mode="
                    + "after-commit), so its reply cannot be awaited here; use sendAndReceiveAsync, or"
                    + " immediate().sendAndReceive to send it now");
        }
        try {
            return this.<R>sendAndReceiveAsync(request, replyType, timeout, failuresBack).join();
        }
        catch (java.util.concurrent.CompletionException ex) {
            if (ex.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw ex;
        }
    }

    /** As {@link #sendAndReceiveAsync(OutgoingMessage, Class, Duration, boolean)}, failures not sent back. */
    public <R> CompletableFuture<R> sendAndReceiveAsync(OutgoingMessage request, Class<R> replyType,
            Duration timeout) {
        return sendAndReceiveAsync(request, replyType, timeout, false);
    }

    /**
     * As {@link #sendAndReceive(OutgoingMessage, Class, Duration, boolean)}, without waiting: the future of the reply
     * (its stages without an executor run on RMQ's reply thread: keep them short). Inside a transaction (after-commit
     * mode) the request is held until the commit and sent then, its timeout counted from then; when the transaction
     * rolls back, the future fails with {@link RmqSendDiscardedException}. Bad input is thrown at once.
     */
    public <R> CompletableFuture<R> sendAndReceiveAsync(OutgoingMessage request, Class<R> replyType,
            Duration timeout, boolean failuresBack) {
        io.rmq.reply.RmqReplies replies = rmq.replies();
        OutgoingMessage message = typed(replies.requestMessage(request, replyType, timeout, failuresBack,
                io.rmq.reply.RmqReplies.newCorrelationId()));
        TransactionHeldSends held = holding();
        if (held == null) {
            return replies.send(message, replyType, timeout);
        }
        OutgoingMessage checked = serialized(message);
        rmq.producer().validate(checked);
        CompletableFuture<R> reply = new CompletableFuture<>();
        held.hold(List.of(checked), () -> {
            // after the commit: the request goes out and its timeout starts now
            replies.<R>send(checked, replyType, timeout).whenComplete((value, error) -> {
                if (error != null) {
                    reply.completeExceptionally(error);
                }
                else {
                    reply.complete(value);
                }
            });
            return CompletableFuture.completedFuture(null);
        }, false).whenComplete((started, error) -> {
            if (error != null) {
                reply.completeExceptionally(error); // rolled back: never sent
            }
        });
        return reply;
    }

    /** A request of {@code payload} to {@code topic}, due at once by the topic's type. */
    private OutgoingMessage request(String topic, Object payload) {
        return switch (rmq.topics().get(topic).type()) {
            case PRIORITY -> OutgoingMessage.priority(topic, payload, 0);
            case FIXED_TIME -> OutgoingMessage.fixedTime(topic, payload, Instant.now());
            case RANGE_MERGE -> OutgoingMessage.rangeMerge(topic, payload, Duration.ofMillis(1));
        };
    }

    /** The held sends when a send made now is held (inside a transaction), else null. */
    private @Nullable TransactionHeldSends holding() {
        return heldSends != null && heldSends.holding() ? heldSends : null;
    }

    /**
     * The message with its body serialized now: what is written after the commit is the body as it was when sent,
     * whatever happens to the object meanwhile ({@code byte[]} bodies are stored as they are, so the bytes are the
     * same as a send at once would write).
     */
    private OutgoingMessage serialized(OutgoingMessage message) {
        Object body = message.body();
        byte[] bytes = body instanceof byte[] raw ? raw.clone() : rmq.options().codec().encode(body);
        return new OutgoingMessage(message.topic(), bytes, message.type(), message.parameter(), message.group(),
                message.id(), message.headers(), message.expiresAt(), message.expiresAfter(), message.dedupeFor());
    }

    /** Each message serialized and checked, before any is held. */
    private List<OutgoingMessage> checked(Collection<OutgoingMessage> messages) {
        List<OutgoingMessage> checked = new ArrayList<>(messages.size());
        for (OutgoingMessage message : messages) {
            OutgoingMessage serialized = serialized(message);
            rmq.producer().validate(serialized);
            checked.add(serialized);
        }
        return List.copyOf(checked);
    }

    private static Object payload(String topic, Message<?> message) {
        if (message == null) {
            throw new RmqInvalidArgumentException("message", null, "must not be null (topic '" + topic + "')");
        }
        return message.getPayload();
    }

    /**
     * The message with its topic's default expiry and deduplication window unless it has its own; with
     * {@code rmq.producer.type-header}, with its payload's class name, unless it names one.
     */
    private OutgoingMessage typed(OutgoingMessage message) {
        if (!expireAfter.isEmpty() && !message.expires()) {
            Duration after = expireAfter.get(message.topic());
            if (after != null) {
                message = message.expiresAfter(after);
            }
        }
        if (!dedupeFor.isEmpty() && message.dedupeFor() == null) {
            Duration window = dedupeFor.get(message.topic());
            if (window != null) {
                message = message.dedupeFor(window);
            }
        }
        Object body = message.body();
        if (!typeHeader || body instanceof String || body instanceof byte[]
                || message.headers().containsKey(RmqHeaders.TYPE_ID)) {
            return message;
        }
        return message.withHeader(RmqHeaders.TYPE_ID, body.getClass().getName());
    }

    private Collection<OutgoingMessage> typed(Collection<OutgoingMessage> messages) {
        return typeHeader || !expireAfter.isEmpty() || !dedupeFor.isEmpty() ? messages.stream().map(this::typed).toList()
                : messages;
    }

    // ------------------------------------------------------------------ operating queues

    /**
     * The queue operations of this template's engine: find, cancel, reschedule or reprioritize one message named by a
     * {@link io.rmq.admin.MessageRef} ({@code template.admin().cancel(MessageRef.body("orders", order))}), browse and
     * purge, sizes, the dead queues. The same object as {@code getRmq().admin()}.
     */
    public RmqAdmin admin() {
        return rmq.admin();
    }

    /** The engine behind this template. */
    public Rmq getRmq() {
        return rmq;
    }
}
