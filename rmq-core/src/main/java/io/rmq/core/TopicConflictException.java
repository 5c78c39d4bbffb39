package io.rmq.core;

/**
 * A topic name was defined twice with a different type or slot amount (in this JVM or cluster-wide in Redis).
 */
public class TopicConflictException extends IllegalStateException {

    private final TopicDefinition existing;
    private final TopicDefinition requested;

    public TopicConflictException(TopicDefinition existing, TopicDefinition requested, String where) {
        super("Conflicting definitions of topic '" + requested.name() + "': " + existing.describe() + " (" + where
                + ") versus " + requested.describe() + " (requested); a topic name must always have the same type"
                + " and slotAmount");
        this.existing = existing;
        this.requested = requested;
    }

    public TopicDefinition getExisting() {
        return existing;
    }

    public TopicDefinition getRequested() {
        return requested;
    }
}
