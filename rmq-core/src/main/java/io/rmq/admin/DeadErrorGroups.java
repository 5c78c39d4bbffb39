package io.rmq.admin;

import java.util.List;

/**
 * A topic's dead messages counted by error class ({@link RmqAdmin#deadErrorGroups}): the class of a dead message is its
 * last error up to the first {@code :} or {@code ;} (an exception's class name, as the engine writes reasons), so
 * {@code java.net.SocketTimeoutException: Read timed out} counts under {@code java.net.SocketTimeoutException}.
 *
 * @param groups  the classes, most dead messages first (then by name); {@code ""} for dead messages without a reason
 * @param scanned dead messages examined (at most {@link RmqAdmin#DEAD_SEARCH_EXAMINED} per request)
 * @param capped  the count stopped at that bound before the end of the dead queue: the counts are lower bounds
 */
public record DeadErrorGroups(List<Group> groups, long scanned, boolean capped) {

    /** One error class and how many dead messages (among those examined) have it. */
    public record Group(String errorClass, long count) {
    }
}
