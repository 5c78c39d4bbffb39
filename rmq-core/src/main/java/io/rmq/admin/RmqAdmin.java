package io.rmq.admin;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * Introspection and the operations behind "manual intervention": find, cancel, reschedule, browse and purge waiting
 * messages; count, page through, search, requeue, delete and purge dead messages; queue sizes per topic and slot. One
 * message is named by a {@link MessageRef}: by the body or the id it was sent with (and its group), or as a view
 * listed it. Views show a message's id, payload and headers. Every change is one atomic script per slot. Get it from {@link io.rmq.Rmq#admin()} (in
 * Spring, {@code RmqTemplate.admin()}). Thread-safe.
 */
public interface RmqAdmin {

    /**
     * Most failed messages {@link #retries} examines per slot and request (retry entries and attempt counts each): a
     * failure storm costs one request a bounded amount of Redis work.
     */
    int RETRIES_EXAMINED = 10_000;

    /** Most dead messages one {@link #searchDead} request examines, all slots together. */
    int DEAD_SEARCH_EXAMINED = 10_000;

    /** Most keys one {@link #redis()} examines to count RMQ's keys, all masters together. */
    int REDIS_KEYS_EXAMINED = 100_000;

    /** Most messages one bulk requeue or delete names. */
    int MAX_SELECTION = 1000;

    /**
     * Where the message is (waiting with its score, in flight, retrying, dead), with the payload and headers of its
     * latest send.
     */
    MessageStatus find(MessageRef message);

    /** Whether the message will still be handled: waiting, retrying or in flight (not dead). */
    boolean contains(MessageRef message);

    /**
     * Cancels the message: removes it where it waits, and its pending retry. A delivery in flight cannot be recalled;
     * it is reported, and once it ends without an ack it is dropped instead of handed out again. A dead message is
     * reported and left alone. A message sent with an id takes its payload and headers with its last copy.
     */
    CancelResult cancel(MessageRef message);

    /**
     * A new due time for a waiting RANGE_MERGE or FIXED_TIME message, whatever the merge rule (at or before now: due
     * at once). A message waiting for its retry moves its retry. In-flight and dead messages are not changed.
     */
    RescheduleResult reschedule(MessageRef message, Instant dueAt);

    /**
     * A new priority for a waiting PRIORITY message, whatever the merge rule; one backing off after a failure comes
     * back with it. In-flight and dead messages are not changed.
     */
    RescheduleResult reprioritize(MessageRef message, long priority);

    /**
     * A page of the topic's waiting messages in taking order across all slots: time types by due time (oldest first),
     * PRIORITY by priority (highest first).
     *
     * @param from  where to start: null for the beginning, else the {@code next} cursor of the previous page
     * @param limit the most messages to return (1 to 1000)
     */
    BrowsePage browse(String topicName, BrowsePage.@Nullable Cursor from, int limit);

    /**
     * Deletes every waiting message of the topic (and, PRIORITY, every retry backing off); in-flight deliveries and
     * the dead queue are untouched. Returns how many went.
     */
    long purge(String topicName);

    /**
     * The topic's queue figures (waiting, in flight, retrying, dead, oldest due), in total and per slot: one script
     * call per slot (stats.lua), pipelined, so one round trip for the whole topic and {@code slotAmount} commands.
     */
    TopicStats stats(String topicName);

    /** {@link #stats(String)} without waiting: for callers that bound the wait themselves (health checks). */
    CompletableFuture<TopicStats> statsAsync(String topicName);

    /**
     * Ends ORDERLY consumption of a topic so CONCURRENT listeners may consume it: every slot's owner key goes (a
     * graceful stop leaves none; an ORDERLY consumer that died does), what ordered consumers had taken and not
     * settled goes back to the store, and the topic's registered consume mode becomes CONCURRENT. Stop the ORDERLY
     * listeners first: fails, naming the slots, while any slot is still owned.
     *
     * @return how many messages went back to the store
     */
    long endOrdering(String topicName);

    /**
     * Lets a topic consumed CONCURRENT be consumed ORDERLY: its registered consume mode becomes ORDERLY. Stop its
     * CONCURRENT listeners first (what they hold in flight is released when they stop gracefully; leases of one that
     * died are handed to the first ORDERLY owner as held messages).
     */
    void beginOrdering(String topicName);

    /**
     * What the topic's senders and consumers counted over the last hour (per minute) or day (per hour); see
     * {@link TopicHistory}. An unknown topic, or one no engine counted anything for, has zeros only.
     */
    TopicHistory history(String topicName, TopicHistory.Resolution resolution);

    /** How many messages the topic's dead queue holds, all slots together. */
    long deadCount(String topic);

    /** How many messages of a topic are in flight (taken and not settled), over all slots. */
    long inFlightCount(String topicName);

    /**
     * A page of the messages in flight: slot by slot, within a slot by prepare score (CONCURRENT: soonest lease
     * deadline first).
     */
    List<InFlightMessage> inFlightMessages(String topicName, long offset, int limit);

    /**
     * A page of the topic's dead messages: slot by slot, oldest death first within a slot.
     *
     * @param offset how many dead messages to skip
     * @param limit  the most to return
     */
    List<DeadMessage> deadMessages(String topicName, long offset, int limit);

    /**
     * Makes one dead message deliverable again with a fresh attempt count; false if it was not dead. A message sent
     * with an id comes back with the payload and headers stored for it. {@link DeadMessage#ref()} names a listed one.
     */
    boolean requeueDead(MessageRef message);

    /** Requeues every dead message of the topic; returns how many. */
    long requeueAllDead(String topicName);

    /** Deletes one dead message for good; false if it was not dead. */
    boolean deleteDead(MessageRef message);

    /** Deletes every dead message of the topic; returns how many. */
    long purgeDead(String topicName);

    /**
     * A page of the topic's messages waiting for a retry (the ones {@link TopicStats#retrying()} counts): slot by slot,
     * soonest next attempt first within a slot, each with its attempts and, when the engine noted it, its latest
     * failure's reason and time. Bounded: at most {@link #RETRIES_EXAMINED} failed messages examined per slot.
     *
     * @param offset how many to skip
     * @param limit  the most to return (1 to 1000)
     */
    RetryPage retries(String topicName, long offset, int limit);

    /**
     * Searches the topic's dead messages: those whose last error contains {@code error} (ignoring the case of ASCII
     * letters) and whose id (messages sent with one) or body (the others) starts with {@code prefix}; null or empty
     * matches all. Slot by slot, oldest death first within a slot; at most {@link #DEAD_SEARCH_EXAMINED} dead messages
     * examined per request ({@link DeadSearchPage#capped()} says when the search stopped there).
     *
     * @param offset how many matches to skip
     * @param limit  the most to return (1 to 1000)
     */
    DeadSearchPage searchDead(String topicName, @Nullable String error, @Nullable String prefix, long offset,
            int limit);

    /**
     * Requeues a selection of dead messages of one topic (at most {@link #MAX_SELECTION}, each named as in
     * {@link #requeueDead(MessageRef)}), one script call per slot, pipelined. Returns how many were dead and came back.
     */
    long requeueDead(String topicName, List<MessageRef> selection);

    /** Deletes a selection of dead messages of one topic (named as in {@link #requeueDead(String, List)}). */
    long deleteDead(String topicName, List<MessageRef> selection);

    /**
     * Requeues the dead messages that match a search ({@code error} and {@code prefix} as in {@link #searchDead}),
     * bounded per request: the first {@link #MAX_SELECTION} matches among at most {@link #DEAD_SEARCH_EXAMINED} dead
     * messages examined. The result says how many were requeued (a match removed meanwhile by someone else is not
     * counted) and whether matches were left for another request.
     */
    DeadBulkResult requeueDeadMatching(String topicName, @Nullable String error, @Nullable String prefix);

    /** Deletes the dead messages that match a search, bounded as {@link #requeueDeadMatching} is. */
    DeadBulkResult deleteDeadMatching(String topicName, @Nullable String error, @Nullable String prefix);

    /**
     * The topic's dead messages counted by error class (see {@link DeadErrorGroups}), most first: slot by slot, at most
     * {@link #DEAD_SEARCH_EXAMINED} dead messages examined per request, and only their error texts read.
     */
    DeadErrorGroups deadErrorGroups(String topicName);

    /**
     * "Run now" for a selection of messages of one topic (at most {@link #MAX_SELECTION}; each as a view listed it,
     * its {@code ref()}): a message waiting for its retry has its backoff ended, and is handed out as soon as a
     * consumer takes it, its attempt count kept; a waiting message of a RANGE_MERGE or FIXED_TIME topic becomes due
     * now. A PRIORITY message that waits in the store is due already (its place in line is its priority:
     * {@link #reprioritize} moves it) and is left alone, as are messages in flight, dead or gone. One script call per
     * slot, pipelined.
     *
     * @return how many of them are now due (were waiting, or retrying)
     */
    long runNow(String topicName, List<MessageRef> messages);

    /**
     * Cancels a selection of messages of one topic (at most {@link #MAX_SELECTION}) as {@link #cancel(MessageRef)}
     * cancels one: removed where they wait, their pending retries too; a delivery in flight is marked and not handed
     * out again; a dead one is left alone.
     *
     * @return how many were removed (waiting or retrying); in-flight ones marked are not counted
     */
    long cancelSelected(String topicName, List<MessageRef> messages);

    /**
     * The Redis RMQ uses: version, mode, memory, clients, the cluster's nodes, and how many keys carry RMQ's prefix
     * (SCAN, at most {@link #REDIS_KEYS_EXAMINED} keys examined per call).
     */
    RedisFigures redis();
}
