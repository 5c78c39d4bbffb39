package io.rmq.admin;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A page of waiting messages in taking order across all slots of a topic.
 *
 * @param messages the messages: time types by due time (oldest first), PRIORITY by priority (highest first); equal
 *                 scores by slot, then as Redis orders them
 * @param next     where the next page starts (pass it to {@code browse}), or null when this page reached the end
 */
public record BrowsePage(List<WaitingMessage> messages, @Nullable Cursor next) {

    /**
     * A position in a topic's taking order: the last message a reader saw. Stays valid while messages come and go:
     * if that message has left meanwhile, the page goes on from its place.
     */
    public record Cursor(double score, int slot, byte[] member, long tie) {
    }
}
