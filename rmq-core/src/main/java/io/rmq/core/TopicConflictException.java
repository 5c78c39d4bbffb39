package io.rmq.core;

/**
 * A topic name was defined twice with a different type, slot amount or consume mode (in this JVM or cluster-wide in
 * Redis).
 */
public class TopicConflictException extends IllegalStateException {

    private final TopicDefinition existing;
    private final TopicDefinition requested;

    public TopicConflictException(TopicDefinition existing, TopicDefinition requested, String where) {
        super("Conflicting definitions of topic '" + requested.name() + "': " + existing.describe() + " (" + where
                + ") versus " + requested.describe() + " (requested); " + rule(existing, requested));
        this.existing = existing;
        this.requested = requested;
    }

    /** Whether the two differ only in their consume mode. */
    public boolean isModeConflict() {
        return existing.type() == requested.type() && existing.slotAmount() == requested.slotAmount();
    }

    /** What the two must agree on, and for a mode conflict, how a topic changes its mode. */
    public String getRule() {
        return rule(existing, requested);
    }

    private static String rule(TopicDefinition existing, TopicDefinition requested) {
        if (existing.type() != requested.type() || existing.slotAmount() != requested.slotAmount()
                || existing.mode() == null || requested.mode() == null) {
            return "a topic name must always have the same type and slotAmount";
        }
        String name = requested.name();
        return "a topic is consumed in one mode, cluster-wide: " + (existing.mode() == ConsumeMode.ORDERLY
                ? "to consume it CONCURRENT, stop its ORDERLY listeners and call RmqAdmin.endOrdering(\"" + name + "\")"
                : "to consume it ORDERLY, stop its CONCURRENT listeners and call RmqAdmin.beginOrdering(\"" + name
                        + "\")");
    }

    public TopicDefinition getExisting() {
        return existing;
    }

    public TopicDefinition getRequested() {
        return requested;
    }
}
