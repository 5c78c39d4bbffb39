-- Gives a waiting message a new score, whatever the topic type's merge rule: a new due time (RANGE_MERGE,
-- FIXED_TIME; at or before now: due at once) or a new priority (PRIORITY). A time-ordered message waiting for its
-- retry waits in store too: its retry moves to the new time, its attempt count stays. A PRIORITY message backing off
-- keeps its retry time and comes back with the new priority. A delivery in flight or a dead message is not changed.
-- Wakes sleeping consumers when the message became its slot's first.
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: the member (serialized body, or 0xFF + id)
-- ARGV[3]: the new score (due ms or priority)
-- Returns: 1 rescheduled (waiting), 2 rescheduled (backing off: PRIORITY, the new priority applies when it returns),
--          3 in flight (unchanged), 4 dead (unchanged), 0 not found
--#include _common.lua
write_when_full()

local is_priority = ARGV[1] == '1'
local m, score = ARGV[2], ARGV[3]
if redis.call('ZSCORE', K_STORE, m) then
    redis.call('ZADD', K_STORE, 'XX', score, m)
    wake_if_first(m, is_priority, now_ms())
    return 1
end
if redis.call('ZSCORE', K_PREPARE, m) then
    return 3
end
if is_priority and redis.call('ZSCORE', K_RETRY, m) then
    redis.call('HSET', K_PRIORITY, m, score)
    return 2
end
if redis.call('ZSCORE', K_DEAD, m) then
    return 4
end
return 0
