package io.rmq.reply;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.RmqException;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.RmqTimeoutException;
import io.rmq.producer.OutgoingMessage;
import org.jspecify.annotations.Nullable;

/**
 * Request-reply ({@code Rmq.replies()}): {@link #request} sends a message that carries a correlation id and this
 * engine's reply inbox ({@link OutgoingMessage#REQUEST_HEADERS}) and returns a future of the reply; whoever handles the
 * request sends what its handler returned back with {@link #reply} (RMQ's Spring listeners do it for every method of
 * theirs that handles a request).
 * <p>
 * Each engine has one inbox, a Redis LIST of its own ({@code <prefix>:{rmq-replies:<inbox id>}}), which a reply
 * creates; replies that nobody takes (the requester died or stopped) expire after the last one, as long as its request's
 * timeout but at least 1 s and at most {@link #KEEP_UNTAKEN}, and an inbox keeps at most {@link #MOST_UNTAKEN}: they
 * never pile up. A closing engine deletes its inbox. A request
 * is its own message (its id is its correlation id: two requests never merge) and expires with its timeout unless it
 * has an expiry of its own, so no handler takes a request whose requester has given up. A reply that comes after its
 * request timed out is dropped with a debug line.
 */
public interface RmqReplies extends AutoCloseable {

    /** Longest replies nobody takes stay in an inbox (after its last reply); a request's timeout shortens it. */
    Duration KEEP_UNTAKEN = Duration.ofSeconds(60);
    /** Most replies an inbox keeps untaken (the oldest go first). */
    int MOST_UNTAKEN = 10_000;

    /** This engine's inbox id: the value of {@link OutgoingMessage#REPLY_TO_HEADER} on its requests. */
    String inboxId();

    /**
     * Sends {@code request} and returns the future of its reply, read as {@code replyType}.
     * <p>
     * The future completes with the reply (null when the handler returned nothing); fails with
     * {@link RmqTimeoutException} when none came within {@code timeout} of the request being stored (so it has expired
     * by then, however long the send took), with the send's failure when
     * the request was not sent, with {@link RmqReplyFailureException} when {@code failuresBack} and the handler failed,
     * and with {@link RmqException} when the reply cannot be read as {@code replyType}. Cancelling it stops the wait.
     * Its stages without an executor run on the inbox thread: keep them short.
     *
     * @param request      the request: any message without an id (its correlation id becomes its id); unless it has an
     *                     expiry, it expires after {@code timeout}
     * @param replyType    what the reply is read as ({@code Object.class}: as JSON reads it)
     * @param timeout      how long to wait for the reply once the request is stored
     * @param failuresBack whether a handler's failure comes back ({@link RmqReplyFailureException}; the request is then
     *                     not retried) instead of the request failing as any message does (retries, the dead queue)
     *                     while the requester times out
     * @throws RmqInvalidArgumentException for a bad request, type (one that cannot be read from JSON at all) or
     *                                     timeout; nothing is sent
     */
    <R> CompletableFuture<R> request(OutgoingMessage request, Type replyType, Duration timeout, boolean failuresBack);

    /**
     * The message {@link #request} would send for {@code request}, with {@code correlationId}, checked as there. For a
     * requester that sends it later (after a transaction commits): {@link #send} then sends it and waits.
     */
    OutgoingMessage requestMessage(OutgoingMessage request, Type replyType, Duration timeout, boolean failuresBack,
            String correlationId);

    /**
     * Sends a message made by {@link #requestMessage} of this engine and returns the future of its reply (see
     * {@link #request}); the timeout counts from when it is stored.
     */
    <R> CompletableFuture<R> send(OutgoingMessage message, Type replyType, Duration timeout);

    /**
     * Sends {@code value} (null: none) back to the requester of the request with {@code requestHeaders} (a delivery's
     * headers); nothing when they are not a request's.
     *
     * @return whether a reply was sent; fails when Redis did not take it
     */
    CompletableFuture<Boolean> reply(Map<String, ?> requestHeaders, @Nullable Object value);

    /**
     * Sends a handler's {@code failure} back to the requester of the request with {@code requestHeaders}, when that
     * request asked for failures ({@link #wantsFailures}); nothing otherwise.
     *
     * @return whether a reply was sent
     */
    CompletableFuture<Boolean> replyFailure(Map<String, ?> requestHeaders, Throwable failure);

    /** Stops waiting: the requests still waiting fail, the inbox is deleted. The engine's close calls it. */
    @Override
    void close();

    /** A new correlation id. */
    static String newCorrelationId() {
        return UUID.randomUUID().toString();
    }

    /** Whether a delivery with these headers is a request that waits for a reply. */
    static boolean isRequest(Map<String, ?> headers) {
        return headers.get(OutgoingMessage.CORRELATION_ID_HEADER) instanceof String
                && headers.get(OutgoingMessage.REPLY_TO_HEADER) instanceof String;
    }

    /** Whether a request with these headers wants its handler's failure back (see {@link #request}). */
    static boolean wantsFailures(Map<String, ?> headers) {
        return isRequest(headers) && "true".equals(headers.get(OutgoingMessage.REPLY_FAILURES_HEADER));
    }
}
