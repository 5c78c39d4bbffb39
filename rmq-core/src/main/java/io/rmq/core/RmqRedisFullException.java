package io.rmq.core;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A send failed at once because the Redis node that serves its slot is over {@code maxmemory} and refuses writes that
 * grow memory (policy {@code noeviction}, the one RMQ needs): what the failed call was to write was <b>not stored</b>.
 * Consumers keep draining a full Redis (pops, acknowledgements, retries and releases do not grow memory and still
 * run), so the same send succeeds once they have made room, or once an operator raised {@code maxmemory} or freed
 * memory. The figures are those the node's {@code INFO memory} gave when the refusal arrived.
 * <p>
 * A batch that spans several slots (several Redis calls, on a cluster several masters) may fail part-way:
 * {@link #storedIndexes()} names, by their position in the batch, the messages that were stored by the calls that
 * succeeded; every other message of the batch was not stored. A single send's list is empty.
 */
public class RmqRedisFullException extends RmqException {

    private final String node;
    private final String usedMemory;
    private final String maxMemory;
    private final String policy;
    private final List<Integer> storedIndexes;

    /**
     * @param node          the Redis node that refused ("standalone" or host:port)
     * @param usedMemory    its {@code used_memory_human}, e.g. "20.01M" ("?" when it could not be read)
     * @param maxMemory     its {@code maxmemory_human}
     * @param policy        its {@code maxmemory_policy}
     * @param operation     what failed, e.g. "sending to topic 'orders'"
     * @param notStored     what was not stored, e.g. "the message was NOT stored"
     * @param storedIndexes positions in a batch of the messages that were stored (empty: none)
     */
    public RmqRedisFullException(String node, String usedMemory, String maxMemory, String policy, String operation,
            String notStored, List<Integer> storedIndexes, @Nullable Throwable cause) {
        super("Redis is full: " + operation + " failed at once, " + notStored + ". Redis " + node + " uses "
                + usedMemory + " of maxmemory " + maxMemory + " (maxmemory-policy " + policy + "), so it refuses writes"
                + " that add data; consumers keep draining it. Send again once they have made room, or raise maxmemory"
                + " / free memory on that node", cause);
        this.node = node;
        this.usedMemory = usedMemory;
        this.maxMemory = maxMemory;
        this.policy = policy;
        this.storedIndexes = List.copyOf(storedIndexes);
    }

    /** The Redis node that refused: "standalone", or host:port of the cluster master. */
    public String node() {
        return node;
    }

    /** Its {@code used_memory_human} when the refusal arrived ("?" when INFO could not be read). */
    public String usedMemory() {
        return usedMemory;
    }

    /** Its {@code maxmemory_human}. */
    public String maxMemory() {
        return maxMemory;
    }

    /** Its {@code maxmemory_policy}. */
    public String policy() {
        return policy;
    }

    /** For a batch: the positions (0-based, in the batch's order) of the messages that were stored; else empty. */
    public List<Integer> storedIndexes() {
        return storedIndexes;
    }
}
