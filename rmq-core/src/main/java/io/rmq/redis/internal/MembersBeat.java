package io.rmq.redis.internal;

import java.util.List;

/**
 * Who a heartbeat of an ordered consumer found live (see members.lua and consumers_beat.lua).
 *
 * @param listed      false when a beat found this instance no longer listed (dropped: it gives up its slots)
 * @param redisNow    the membership's Redis clock when the list was read (ms)
 * @param live        the live instance ids then (this one included when listed)
 * @param coversOlder the list includes the instances of older engines, listed in the topic's own membership key: a
 *                    claim on it may take a slot over from one of them (see own.lua)
 */
public record MembersBeat(boolean listed, long redisNow, List<String> live, boolean coversOlder) {

    /** A reading of the topic's own membership key (it covers the instances of older engines). */
    public MembersBeat(boolean listed, long redisNow, List<String> live) {
        this(listed, redisNow, live, true);
    }
}
