-- Membership of the ORDERLY consumers of one topic (the Redis coordinator): a heartbeat keeps an instance listed
-- until now + ttl; instances whose time ran out are dropped. Every instance assigns the slots from the same list, and
-- the list is also the lease of every slot an instance holds (see _orderly.lua): a claimant takes a slot over only
-- from a holder missing from the list its own heartbeat returned. So a heartbeat of an instance that is no longer
-- listed (its time ran out: others may have taken its slots) fails and does not list it again; it gives up every
-- slot and joins anew. An idle beat runs ZREM (of nothing: see below), TIME, ZRANGE and ZADD (ZREMRANGEBYSCORE only
-- when some entry ran out).
--
-- Runs while Redis is over maxmemory (a beat rewrites one score; consumers must keep their slots while Redis is full).
-- KEYS[1]: <prefix>:{<topic>}:members   ZSET member=instance id, score=Redis ms until which it counts as alive
-- ARGV[1]: 'join' (the first beat of an instance), 'beat', 'leave' or 'list' (read only: who is live)
-- ARGV[2]: instance id ('' for 'list'); ARGV[3]: ttl in ms
-- Returns: { status, Redis now (ms), live id1, live id2, ... } (ids in any order, this instance included when
--          listed); status 1, or 0 for a 'beat' of an instance no longer listed (nothing was written for it)
redis.call('ZREM', KEYS[1], '\255') -- first write: runs over maxmemory (see write_when_full in _common.lua)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local action, me = ARGV[1], ARGV[2]
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out, expired, listed = { 1, now }, false, false
for i = 1, #all, 2 do
    if tonumber(all[i + 1]) < now then
        expired = true
    elseif all[i] == me then
        listed = true
    else
        out[#out + 1] = all[i]
    end
end
if expired then
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
end
if action == 'list' then
    return out
end
if action == 'leave' then
    redis.call('ZREM', KEYS[1], me)
    return out
end
if action == 'beat' and not listed then
    out[1] = 0
    return out
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), me)
out[#out + 1] = me
return out
