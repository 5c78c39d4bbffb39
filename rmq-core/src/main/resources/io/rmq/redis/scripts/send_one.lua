-- A lone send (one message, no envelope or a body's trace context alone; SendWrites.sendOne): the write, its merge
-- rule and the wake-up decision in one call and one round trip. Kept small on purpose: no _common.lua (whatever a
-- script's top level defines, each call pays for), no tables, five arguments at most. The merge rules, the wake-up
-- and its message are send.lua's:
--   'r' RANGE_MERGE: due = Redis-now + timeRange, unless the body is already waiting: then it merges and keeps its
--                    due time (ZADD NX), and nothing is announced (the slot's first message did not change);
--   't' FIXED_TIME:  score = due time, a waiting duplicate takes the latest;
--   'p' PRIORITY:    score = priority, a waiting duplicate takes the latest.
-- Wake-up: when the message is the slot's first (rank 0; PRIORITY: the highest, ZREVRANK 0 — a little more often than
-- send.lua's wake_if_first, which announces a PRIORITY message only into an empty slot: an extra announcement costs a
-- sleeper one pop, never a miss), PUBLISH "<store key>|<due ms>" on "<prefix>:wake" (PRIORITY: due now).
-- A trace record (a body whose envelope is its trace context alone) is written before the member, as send.lua does.
--
-- KEYS[1]: the slot's store; KEYS[2] (only with a trace record): the slot's trace HASH
-- ARGV[1]: 'r', 't' or 'p' (above)
-- ARGV[2]: timeRange ms ('r'), due ms ('t') or priority ('p')
-- ARGV[3]: the member
-- ARGV[4], ARGV[5] (only with KEYS[2]): the trace record's field and value
-- Returns: 1 when the message was added, 0 when it merged into a waiting one; + 2 when it announced (SendWrites
--          sends the next lone message of a slot that did not announce as native commands instead)

local store, mode, member = KEYS[1], ARGV[1], ARGV[3]
if KEYS[2] then
    redis.call('HSET', KEYS[2], ARGV[4], ARGV[5])
end
local score, added, rank
if mode == 'r' then
    local t = redis.call('TIME')
    score = string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000) + ARGV[2])
    added = redis.call('ZADD', store, 'NX', score, member)
    if added == 0 then
        return 0
    end
    rank = redis.call('ZRANK', store, member)
elseif mode == 't' then
    score = ARGV[2]
    added = redis.call('ZADD', store, score, member)
    rank = redis.call('ZRANK', store, member)
else
    added = redis.call('ZADD', store, ARGV[2], member)
    rank = redis.call('ZREVRANK', store, member)
    if rank == 0 then
        local t = redis.call('TIME')
        score = string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000))
    end
end
if rank == 0 then
    redis.call('PUBLISH', string.match(store, '^(.*):{') .. ':wake', store .. '|' .. score)
    return added + 2
end
return added
