package io.rmq.core;


/**
 * A topic: its name, what its scores mean, and how many sorted sets ("slots") it is split into.
 *
 * @param name       letters, digits, {@code .}, {@code _}, {@code -}; 1 to 100 characters
 * @param type       what the store score means
 * @param slotAmount number of slots, a power of two between 1 and 16384
 */
public record TopicDefinition(String name, TopicType type, int slotAmount) {

    /** Slot keys carry the topic name inside a hash tag, so braces and colons are forbidden. */

    public static final int MAX_SLOT_AMOUNT = 16384;

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

    /** The form stored in Redis's topic registry, e.g. {@code PRIORITY:16}. */
    public String encode() {
        return type.name() + ":" + slotAmount;
    }

    /** Reverses {@link #encode()}. */
    public static TopicDefinition decode(String name, String encoded) {
        int colon = encoded.indexOf(':');
        if (colon < 0) {
            throw new RmqException("Unreadable definition of topic '" + name + "' in Redis: '" + encoded + "'");
        }
        try {
            return new TopicDefinition(name, TopicType.valueOf(encoded.substring(0, colon)),
                    Integer.parseInt(encoded.substring(colon + 1)));
        }
        catch (IllegalArgumentException ex) {
            throw new RmqException("Unreadable definition of topic '" + name + "' in Redis: '" + encoded + "'", ex);
        }
    }

    /** Human-readable form used in error messages. */
    public String describe() {
        return "topic '" + name + "' type=" + type + " slotAmount=" + slotAmount;
    }
}
