package io.rmq.admin;

import java.util.List;

/**
 * A page of the dead messages that match a search (slot by slot, oldest death first within a slot).
 *
 * @param messages the page
 * @param total    matches among the dead messages examined
 * @param scanned  dead messages examined (at most {@link RmqAdmin#DEAD_SEARCH_EXAMINED} per request)
 * @param capped   the search stopped at that bound before the end of the dead queue: {@code total} is a lower bound
 *                 and later matches are not found by this request
 */
public record DeadSearchPage(List<DeadMessage> messages, long total, long scanned, boolean capped) {
}
