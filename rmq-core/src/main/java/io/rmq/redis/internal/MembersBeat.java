package io.rmq.redis.internal;

import java.util.List;

/**
 * What a heartbeat of an ordered consumer found (see members.lua).
 *
 * @param listed   false when a beat found this instance no longer listed (dropped: it gives up its slots)
 * @param redisNow the membership's Redis clock when the list was read (ms)
 * @param live     the live instance ids then (this one included when listed)
 */
public record MembersBeat(boolean listed, long redisNow, List<String> live) {
}
