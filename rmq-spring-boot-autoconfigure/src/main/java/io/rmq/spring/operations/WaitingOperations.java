package io.rmq.spring.operations;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import io.rmq.Rmq;
import io.rmq.admin.BrowsePage;
import io.rmq.admin.CancelResult;
import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.RescheduleResult;
import io.rmq.admin.WaitingMessage;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.spring.operations.RmqOperations.FindView;
import io.rmq.spring.operations.RmqOperations.WaitingPage;
import io.rmq.spring.operations.RmqOperations.WaitingView;
import org.jspecify.annotations.Nullable;

/**
 * Messages not taken yet: waiting pages in taking order, where one message (by body or id) is, cancelling or
 * rescheduling one, and running now or deleting a selection of waiting or retrying ones. Holds no state of its own;
 * any request thread of the endpoint or the dashboard calls it.
 */
final class WaitingOperations {

    private final Rmq rmq;
    private final TopicLookup topics;

    WaitingOperations(Rmq rmq, TopicLookup topics) {
        this.rmq = rmq;
        this.topics = topics;
    }

    /** See {@link RmqOperations#waiting(String, String, int)}. */
    WaitingPage waiting(String topic, @Nullable String cursor, int limit) {
        TopicDefinition definition = topics.required(topic);
        Views.checkLimit(limit);
        BrowsePage page = rmq.admin().browse(topic, decodeCursor(cursor), limit);
        boolean priority = definition.type() == TopicType.PRIORITY;
        List<WaitingView> messages = new ArrayList<>(page.messages().size());
        for (WaitingMessage m : page.messages()) {
            messages.add(new WaitingView(m.slot(), m.bodyAsString(), priority ? null : Instant.ofEpochMilli((long) m.score()),
                    priority ? (long) m.score() : null, m.failedAttempts(), m.id(), Views.shown(m.headers()),
                    Views.handle(m.ref())));
        }
        return new WaitingPage(topic, messages, encodeCursor(page.next()));
    }

    /** The browse cursor as one opaque URL-safe string: score, slot, tie and the member. */
    static @Nullable String encodeCursor(BrowsePage.@Nullable Cursor cursor) {
        if (cursor == null) {
            return null;
        }
        String raw = Double.doubleToRawLongBits(cursor.score()) + ":" + cursor.slot() + ":" + cursor.tie() + ":"
                + Base64.getEncoder().encodeToString(cursor.member());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
    }

    static BrowsePage.@Nullable Cursor decodeCursor(@Nullable String cursor) {
        if (cursor == null || cursor.isEmpty()) {
            return null;
        }
        try {
            String[] parts = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split(":", 4);
            return new BrowsePage.Cursor(Double.longBitsToDouble(Long.parseLong(parts[0])), Integer.parseInt(parts[1]),
                    Base64.getDecoder().decode(parts[3]), Long.parseLong(parts[2]));
        }
        catch (RuntimeException ex) {
            throw new RmqInvalidArgumentException("cursor", cursor, "is not the next cursor of a waiting page");
        }
    }

    /** The message sent to a defined topic with this body. */
    MessageRef byBody(String topic, String body) {
        topics.required(topic);
        return MessageRef.body(topic, body);
    }

    /** The message sent to a defined topic with this id, refused when no send could have taken the id. */
    MessageRef byId(String topic, String id) {
        topics.required(topic);
        Views.checkId(rmq, "id", id);
        return MessageRef.id(topic, id);
    }

    /** See {@link RmqOperations#find(String, String)} and {@link RmqOperations#findById(String, String)}. */
    FindView find(MessageRef message) {
        return findView(topics.required(message.topic()), rmq.admin().find(message));
    }

    private static FindView findView(TopicDefinition definition, MessageStatus s) {
        boolean priority = definition.type() == TopicType.PRIORITY;
        Double score = s.waitingScore();
        return new FindView(definition.name(), s.slot(), s.bodyAsString(), s.isWaiting(),
                score == null || priority ? null : Instant.ofEpochMilli(score.longValue()),
                score == null || !priority ? null : score.longValue(), s.inFlight(), s.retryAt(), s.failedAttempts(),
                s.diedAt(), s.deadReason(), s.cancelled(), s.id(), Views.shown(s.headers()));
    }

    /** See {@link RmqOperations#runNow(String, List)}. */
    RmqOperations.Result runNow(String topic, List<RmqOperations.Selected> selection) {
        topics.required(topic);
        return new RmqOperations.Result("run-now", topic, rmq.admin().runNow(topic, Views.refs(topic, selection)));
    }

    /** See {@link RmqOperations#deleteWaiting(String, List)}. */
    RmqOperations.Result delete(String topic, List<RmqOperations.Selected> selection) {
        topics.required(topic);
        return new RmqOperations.Result("delete", topic, rmq.admin().cancelSelected(topic,
                Views.refs(topic, selection)));
    }

    CancelResult cancel(MessageRef message) {
        return rmq.admin().cancel(message);
    }

    /** See {@link RmqOperations#reschedule(String, String, String)}. */
    RescheduleResult reschedule(MessageRef message, String when) {
        String topic = message.topic();
        TopicDefinition definition = topics.required(topic);
        if (when == null || when.isBlank()) {
            throw new RmqInvalidArgumentException("when", when, "must be set");
        }
        String value = when.trim();
        if (definition.type() == TopicType.PRIORITY) {
            long priority;
            try {
                priority = Long.parseLong(value);
            }
            catch (NumberFormatException ex) {
                throw new RmqInvalidArgumentException("when", when, "must be a whole number: " + topic
                        + " is a PRIORITY topic");
            }
            return rmq.admin().reprioritize(message, priority);
        }
        return rmq.admin().reschedule(message, dueAt(value));
    }

    private static Instant dueAt(String value) {
        if (value.equalsIgnoreCase("now")) {
            return Instant.now();
        }
        try {
            return Instant.parse(value);
        }
        catch (RuntimeException notAnInstant) {
            try {
                Duration delay = org.springframework.boot.convert.DurationStyle.detectAndParse(value);
                return Instant.now().plus(delay);
            }
            catch (RuntimeException notADuration) {
                throw new RmqInvalidArgumentException("when", value, "must be now, an ISO-8601 instant"
                        + " (2030-01-01T09:00:00Z) or a delay (90s, 5m, PT1H)");
            }
        }
    }
}
