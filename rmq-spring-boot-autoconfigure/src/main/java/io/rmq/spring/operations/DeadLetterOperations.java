package io.rmq.spring.operations;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import io.rmq.Rmq;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.MessageRef;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.spring.operations.RmqOperations.DeadPage;
import io.rmq.spring.operations.RmqOperations.DeadSearchView;
import io.rmq.spring.operations.RmqOperations.DeadView;
import io.rmq.spring.operations.RmqOperations.Result;
import io.rmq.spring.operations.RmqOperations.Selected;
import org.jspecify.annotations.Nullable;

/**
 * The dead queues: pages and searches of dead messages, and requeueing or deleting one, a selection or all of them. A
 * message sent with an id is named by its id, any other by its exact stored body (base64). Holds no state of its own;
 * any request thread of the endpoint or the dashboard calls it.
 */
final class DeadLetterOperations {

    private final Rmq rmq;
    private final TopicLookup topics;

    DeadLetterOperations(Rmq rmq, TopicLookup topics) {
        this.rmq = rmq;
        this.topics = topics;
    }

    DeadPage dead(String topic, long offset, int limit) {
        topics.required(topic);
        Views.checkLimit(limit);
        long total = rmq.admin().deadCount(topic);
        List<DeadView> page = rmq.admin().deadMessages(topic, offset, limit).stream()
                .map(DeadLetterOperations::deadView).toList();
        return new DeadPage(topic, offset, limit, total, page);
    }

    private static DeadView deadView(DeadMessage d) {
        return new DeadView(d.slot(), d.bodyAsString(), Base64.getEncoder().encodeToString(d.body()), d.lastError(),
                d.attempts(), d.diedAt(), d.priority(), d.id(), Views.shown(d.headers()), Views.handle(d.ref()));
    }

    Result requeueDead(String topic, int slot, @Nullable String id, @Nullable String bodyBase64) {
        boolean done = rmq.admin().requeueDead(named(topic, slot, id, bodyBase64));
        return new Result("requeue-dead", topic, done ? 1 : 0);
    }

    Result deleteDead(String topic, int slot, @Nullable String id, @Nullable String bodyBase64) {
        boolean done = rmq.admin().deleteDead(named(topic, slot, id, bodyBase64));
        return new Result("delete-dead", topic, done ? 1 : 0);
    }

    Result requeueAllDead(String topic) {
        topics.required(topic);
        return new Result("requeue-dead", topic, rmq.admin().requeueAllDead(topic));
    }

    Result purgeDead(String topic) {
        topics.required(topic);
        return new Result("purge-dead", topic, rmq.admin().purgeDead(topic));
    }

    /** One dead message of the topic, named by its id or else by its exact stored body (base64). */
    private MessageRef named(String topic, int slot, @Nullable String id, @Nullable String bodyBase64) {
        topics.required(topic);
        if (id != null && !id.isEmpty()) {
            Views.checkId(rmq, "id", id);
            return MessageRef.id(topic, id).atSlot(slot);
        }
        byte[] body;
        try {
            body = Base64.getDecoder().decode(bodyBase64 == null ? "" : bodyBase64);
        }
        catch (IllegalArgumentException ex) {
            throw new RmqInvalidArgumentException("body", bodyBase64, "must be base64 (the bodyBase64 of a dead message)");
        }
        if (body.length == 0) {
            throw new RmqInvalidArgumentException("body", bodyBase64, "must not be empty");
        }
        return MessageRef.stored(topic, slot, body);
    }

    /** See {@link RmqOperations#dead(String, long, int, String, String)}. */
    DeadSearchView dead(String topic, long offset, int limit, @Nullable String error, @Nullable String prefix) {
        topics.required(topic);
        Views.checkLimit(limit);
        Views.checkOffset(offset);
        String err = error == null || error.isEmpty() ? null : error;
        String pre = prefix == null || prefix.isEmpty() ? null : prefix;
        io.rmq.admin.DeadSearchPage page = rmq.admin().searchDead(topic, err, pre, offset, limit);
        return new DeadSearchView(topic, offset, limit, page.total(), err, pre, page.scanned(), page.capped(),
                page.messages().stream().map(DeadLetterOperations::deadView).toList());
    }

    Result requeueDeadSelected(String topic, List<Selected> selection) {
        topics.required(topic);
        return new Result("requeue-dead-selected", topic, rmq.admin().requeueDead(topic, selected(topic, selection)));
    }

    Result deleteDeadSelected(String topic, List<Selected> selection) {
        topics.required(topic);
        return new Result("delete-dead-selected", topic, rmq.admin().deleteDead(topic, selected(topic, selection)));
    }

    /** A requeue ("requeue-dead-matching") or delete of the dead messages matching a search. */
    RmqOperations.MatchingResult matching(String action, String topic, @Nullable String error,
            @Nullable String prefix) {
        topics.required(topic);
        String err = error == null || error.isEmpty() ? null : error;
        String pre = prefix == null || prefix.isEmpty() ? null : prefix;
        io.rmq.admin.DeadBulkResult done = action.startsWith("requeue")
                ? rmq.admin().requeueDeadMatching(topic, err, pre) : rmq.admin().deleteDeadMatching(topic, err, pre);
        return new RmqOperations.MatchingResult(action, topic, err, pre, done.acted(), done.matched(), done.scanned(),
                done.more());
    }

    RmqOperations.DeadGroupsView groups(String topic) {
        topics.required(topic);
        io.rmq.admin.DeadErrorGroups groups = rmq.admin().deadErrorGroups(topic);
        return new RmqOperations.DeadGroupsView(topic, groups.groups(), groups.scanned(), groups.capped());
    }

    /** See {@link RmqOperations#selection(Object)}. */
    static List<Selected> selection(@Nullable Object messages) {
        if (!(messages instanceof List<?> list) || list.isEmpty()) {
            throw new RmqInvalidArgumentException("messages", messages, "must be a non-empty list of {slot, handle}"
                    + " or {slot, id}");
        }
        if (list.size() > RmqOperations.MAX_SELECTION) {
            throw new RmqInvalidArgumentException("messages", list.size() + " entries", "must name at most "
                    + RmqOperations.MAX_SELECTION + " messages per request");
        }
        List<Selected> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            String at = "messages[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> entry)) {
                throw new RmqInvalidArgumentException(at, list.get(i), "must be an object {slot, handle} or {slot, id}");
            }
            Object slot = entry.get("slot");
            int number;
            if (slot instanceof Integer || slot instanceof Long || slot instanceof Short) {
                number = ((Number) slot).intValue();
            }
            else {
                try {
                    number = Integer.parseInt(String.valueOf(slot));
                }
                catch (NumberFormatException ex) {
                    throw new RmqInvalidArgumentException(at + ".slot", slot, "must be a slot number");
                }
            }
            Object handle = entry.get("handle");
            Object id = entry.get("id");
            boolean hasHandle = handle != null && !handle.toString().isEmpty();
            boolean hasId = id != null && !id.toString().isEmpty();
            if (hasHandle == hasId) {
                throw new RmqInvalidArgumentException(at, entry, "must name the message by exactly one of handle"
                        + " and id");
            }
            out.add(new Selected(number, hasHandle ? handle.toString() : null, hasId ? id.toString() : null));
        }
        return out;
    }

    /** A selection of dead messages, each id within {@code rmq.max-id-size}. */
    private List<MessageRef> selected(String topic, List<Selected> selection) {
        List<MessageRef> refs = Views.refs(topic, selection);
        for (int i = 0; i < selection.size(); i++) {
            if (selection.get(i).id() != null) {
                Views.checkId(rmq, "messages[" + i + "].id", selection.get(i).id());
            }
        }
        return refs;
    }
}
