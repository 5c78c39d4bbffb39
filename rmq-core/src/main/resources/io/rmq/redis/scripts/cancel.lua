-- Cancels a message by its member (body or id): removes it where it waits (store), and its pending retry (a PRIORITY
-- message backing off in the retry ZSET; an ORDERLY slot's failed head waiting for its retry). A delivery in flight
-- cannot be recalled from its handler: it is marked, and when that delivery ends without an ack (failure, lease expiry,
-- release at shutdown, hand-over of an ordered slot) it is dropped instead of being handed out again (see
-- take_cancel_mark in _common.lua). A dead body is left alone (the dead queue has its own delete).
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: the member (serialized body, or 0xFF + id)
-- Returns: { removed from store (0/1), pending retry removed (0/1), in flight (0/1: marked), dead (0/1) }
--#include _common.lua
write_when_full()

local is_priority = ARGV[1] == '1'
local m = ARGV[2]
local ordered = redis.call('EXISTS', K_OWNER) == 1
local waiting = redis.call('ZREM', K_STORE, m)
local retry_removed, in_flight = 0, 0
local held = redis.call('ZSCORE', K_PREPARE, m)
if held then
    if ordered and redis.call('ZSCORE', K_RETRY, m) then
        -- the failed head of an ordered slot, suspended until its retry: nobody handles it now; the slot moves on
        redis.call('ZREM', K_PREPARE, m)
        redis.call('ZREM', K_RETRY, m)
        retry_removed = 1
    else
        redis.call('SADD', K_CANCELLED, m)
        in_flight = 1
    end
end
if not ordered and is_priority and redis.call('ZREM', K_RETRY, m) == 1 then
    retry_removed = 1
end
if in_flight == 0 and (waiting == 1 or retry_removed == 1) then
    redis.call('HDEL', K_ATTEMPTS, m)
    redis.call('HDEL', K_ERRORS, m)
    redis.call('HDEL', K_PRIORITY, m)
end
-- the trace context goes with the last copy (an in-flight one keeps it until its delivery ends; a dead one keeps it)
forget_envelopes({ m })
local dead = redis.call('ZSCORE', K_DEAD, m) and 1 or 0
return { waiting, retry_removed, in_flight, dead }
