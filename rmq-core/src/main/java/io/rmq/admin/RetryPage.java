package io.rmq.admin;

import java.util.List;

/**
 * A page of a topic's messages waiting for a retry: slot by slot, soonest next attempt first within a slot.
 *
 * @param messages the page
 * @param total    how many messages of the topic wait for a retry (among those examined, see {@code capped})
 * @param capped   a slot had more failed messages than one request examines ({@link RmqAdmin#RETRIES_EXAMINED} per
 *                 slot): {@code total} and the pages cover only those examined
 */
public record RetryPage(List<RetryingMessage> messages, long total, boolean capped) {
}
