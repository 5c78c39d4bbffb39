package io.rmq.spring.operations;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import io.rmq.admin.MessageRef;
import io.rmq.core.RmqInvalidArgumentException;

/**
 * What every view shares: how headers and handles are shown, and the checks of page arguments. Static and stateless,
 * so any thread calls it.
 */
final class Views {

    private Views() {
    }

    /** Headers as the views show them: every name, values cut to {@link RmqOperations#HEADER_VALUE_CHARS} characters. */
    static Map<String, String> shown(Map<String, String> headers) {
        if (headers.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new java.util.LinkedHashMap<>(headers.size() * 2);
        headers.forEach((name, value) -> out.put(name, cut(value)));
        return java.util.Collections.unmodifiableMap(out);
    }

    private static String cut(String value) {
        int max = RmqOperations.HEADER_VALUE_CHARS;
        if (value.length() <= max) {
            return value;
        }
        int end = Character.isHighSurrogate(value.charAt(max - 1)) ? max - 1 : max; // never half a character
        return value.substring(0, end) + "…";
    }

    /** The member a listed message is stored as, in base64: its handle in the views. */
    static String handle(MessageRef message) {
        byte[] member = message.member();
        return member == null ? "" : Base64.getEncoder().encodeToString(member);
    }

    /**
     * A selection of one topic's messages as the engine names them: each by its slot and its handle or id. Refused
     * naming the entry when a handle is not base64 or is empty, or the selection is too long.
     */
    static List<MessageRef> refs(String topic, List<RmqOperations.Selected> selection) {
        if (selection.size() > RmqOperations.MAX_SELECTION) {
            throw new RmqInvalidArgumentException("messages", selection.size() + " entries", "must name at most "
                    + RmqOperations.MAX_SELECTION + " messages per request");
        }
        List<MessageRef> out = new ArrayList<>(selection.size());
        for (int i = 0; i < selection.size(); i++) {
            RmqOperations.Selected s = selection.get(i);
            out.add(s.id() != null ? MessageRef.id(topic, s.id()).atSlot(s.slot())
                    : MessageRef.stored(topic, s.slot(), handle(i, s.handle())));
        }
        return out;
    }

    static void checkLimit(int limit) {
        if (limit < 1 || limit > RmqOperations.MAX_PAGE) {
            throw new RmqInvalidArgumentException("limit", limit, "must be between 1 and " + RmqOperations.MAX_PAGE);
        }
    }

    /**
     * Refuses an id no message can have: empty, or longer than {@code rmq.max-id-size} (a send refuses those, so a
     * lookup by one would only answer "not there" for a typing error).
     *
     * @param field how the request names it ({@code id}, {@code messages[2].id})
     */
    static void checkId(io.rmq.Rmq rmq, String field, String id) {
        if (id.isEmpty()) {
            throw new RmqInvalidArgumentException(field, id, "must not be empty");
        }
        int max = rmq.options().limits().maxIdBytes();
        int bytes = id.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (bytes > max) {
            throw new RmqInvalidArgumentException(field, id, "must be at most " + max + " bytes (rmq.max-id-size);"
                    + " this one has " + bytes);
        }
    }

    static void checkOffset(long offset) {
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", offset, "must be zero or positive");
        }
    }

    /** The storage member a selection's {@code messages[i].handle} names (base64 of a listed message's member). */
    static byte[] handle(int i, String handle) {
        byte[] member;
        try {
            member = Base64.getDecoder().decode(handle == null ? "" : handle);
        }
        catch (IllegalArgumentException ex) {
            throw new RmqInvalidArgumentException("messages[" + i + "].handle", handle, "must be base64 (the"
                    + " handle of a listed message)");
        }
        if (member.length == 0) {
            throw new RmqInvalidArgumentException("messages[" + i + "].handle", handle, "must not be empty");
        }
        return member;
    }
}
