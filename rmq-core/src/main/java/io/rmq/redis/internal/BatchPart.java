package io.rmq.redis.internal;

import java.util.List;

import io.rmq.core.internal.RmqKeys.SlotKeys;
import org.jspecify.annotations.Nullable;

/**
 * One slot's part of a batch send.
 *
 * @param parameters per member: timeRange ms (RANGE_MERGE), priority, or due ms (FIXED_TIME)
 */
public record BatchPart(SlotKeys slot, boolean rangeMerge, boolean priority, List<byte[]> members,
        long[] parameters, @Nullable List<byte[]> traceRecords, @Nullable List<byte[]> envelopes) {

    // traceRecords: field, value, field, value ... of the trace records (EnvelopeKeys#traceRecord) of the part's
    // bodies that carry their trace context alone, written by one HSET just before the part's ZADD; null: none
    // envelopes: id member, envelope, id member, envelope ... of a part of id messages alone, written into the slot's
    // msg HASH atomically with the part's ZADD (a Transaction); null: none. Only where RedisGateway#transactions().

    public BatchPart(SlotKeys slot, boolean rangeMerge, boolean priority, List<byte[]> members, long[] parameters) {
        this(slot, rangeMerge, priority, members, parameters, null, null);
    }

    public BatchPart(SlotKeys slot, boolean rangeMerge, boolean priority, List<byte[]> members, long[] parameters,
            @Nullable List<byte[]> traceRecords) {
        this(slot, rangeMerge, priority, members, parameters, traceRecords, null);
    }
}
