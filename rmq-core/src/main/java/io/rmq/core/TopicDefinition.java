package io.rmq.core;

import org.jspecify.annotations.Nullable;


/**
 * A topic: its name, what its scores mean, how many sorted sets ("slots") it is split into, and how it is consumed.
 *
 * @param name       letters, digits, {@code .}, {@code _}, {@code -}; 1 to 100 characters
 * @param type       what the store score means
 * @param slotAmount number of slots, a power of two between 1 and 16384
 * @param mode       how its listeners consume it (ORDERLY slots have owners and ordered prepare sets, which
 *                   CONCURRENT consumers must not touch); null while no listener has declared it (a producer's
 *                   definition, or one registered before the mode was part of it). One mode per topic, cluster-wide.
 */
public record TopicDefinition(String name, TopicType type, int slotAmount, @Nullable ConsumeMode mode) {

    /** Slot keys carry the topic name inside a hash tag, so braces and colons are forbidden. */

    public static final int MAX_SLOT_AMOUNT = 16384;

    /** A definition that says nothing about the consume mode (what producers and {@code rmq.topics} define). */
    public TopicDefinition(String name, TopicType type, int slotAmount) {
        this(name, type, slotAmount, null);
    }

    public TopicDefinition {
        validateName(name);
        if (type == null) {
            throw new RmqInvalidArgumentException("topic type", null, "must be one of RANGE_MERGE, PRIORITY, FIXED_TIME");
        }
        if (slotAmount < 1 || slotAmount > MAX_SLOT_AMOUNT || Integer.bitCount(slotAmount) != 1) {
            throw new RmqInvalidArgumentException("slotAmount", slotAmount,
                    "must be a power of two between 1 and " + MAX_SLOT_AMOUNT + " (topic '" + name + "')");
        }
    }

    /** Checks a topic name against the naming rule. */
    public static String validateName(String name) {
        if (!isValidName(name)) {
            throw new RmqInvalidArgumentException("topic name", name,
                    "must be 1-100 characters of letters, digits, '.', '_' or '-' (no braces, colons or spaces)");
        }
        return name;
    }

    /** [A-Za-z0-9._-]{1,100}, as a loop: it runs for every message sent (a regex match was a visible part of a send). */
    private static boolean isValidName(String name) {
        if (name == null || name.isEmpty() || name.length() > 100) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
                    || c == '_' || c == '-';
            if (!allowed) {
                return false;
            }
        }
        return true;
    }

    /** This definition with its consume mode declared. */
    public TopicDefinition withMode(@Nullable ConsumeMode mode) {
        return new TopicDefinition(name, type, slotAmount, mode);
    }

    /**
     * Whether both can hold for one topic: the same type and slot amount, and no different consume modes (a definition
     * without a mode agrees with either).
     */
    public boolean agreesWith(TopicDefinition other) {
        return name.equals(other.name) && type == other.type && slotAmount == other.slotAmount
                && (mode == null || other.mode == null || mode == other.mode);
    }

    /** The form stored in Redis's topic registry, e.g. {@code PRIORITY:16}, or {@code PRIORITY:16:ORDERLY}. */
    public String encode() {
        return type.name() + ":" + slotAmount + (mode == null ? "" : ":" + mode.name());
    }

    /** Reverses {@link #encode()}. */
    public static TopicDefinition decode(String name, String encoded) {
        int colon = encoded.indexOf(':');
        if (colon < 0) {
            throw new RmqException("Unreadable definition of topic '" + name + "' in Redis: '" + encoded + "'");
        }
        try {
            int second = encoded.indexOf(':', colon + 1);
            return new TopicDefinition(name, TopicType.valueOf(encoded.substring(0, colon)),
                    Integer.parseInt(second < 0 ? encoded.substring(colon + 1) : encoded.substring(colon + 1, second)),
                    second < 0 ? null : ConsumeMode.valueOf(encoded.substring(second + 1)));
        }
        catch (IllegalArgumentException ex) {
            throw new RmqException("Unreadable definition of topic '" + name + "' in Redis: '" + encoded + "'", ex);
        }
    }

    /** Human-readable form used in error messages. */
    public String describe() {
        return "topic '" + name + "' type=" + type + " slotAmount=" + slotAmount
                + (mode == null ? "" : " mode=" + mode);
    }
}
