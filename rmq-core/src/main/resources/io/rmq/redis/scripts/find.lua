-- Where a message (its member: a body, or 0xFF + id) is in its slot (read only). One member can be in several places
-- at once: waiting in store while an earlier copy of it is in flight (a duplicate sent meanwhile), or backing off
-- (PRIORITY retry ZSET) while a newer duplicate waits.
--
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: the member (serialized body, or 0xFF + id)
-- Returns: { store score, prepare score, retry score, dead score, failed attempts, dead info, cancelled, ordered,
--            envelope }
--   scores are '' where the body is absent; failed attempts counts failures of the live (not dead) message;
--   dead info is "attempts\npriority\nlast error" or ''; cancelled is 1 when a cancel marked its in-flight delivery;
--   ordered is 1 when the slot is consumed by ORDERLY listeners (its prepare holds taken messages, not leases);
--   envelope is the member's stored envelope (payload of an id message, headers), a legacy trace context, or ''
--#include _common.lua

local m = ARGV[1]
local envelope = envelopes_of({ m }, true)
return {
    redis.call('ZSCORE', K_STORE, m) or '',
    redis.call('ZSCORE', K_PREPARE, m) or '',
    redis.call('ZSCORE', K_RETRY, m) or '',
    redis.call('ZSCORE', K_DEAD, m) or '',
    tonumber(redis.call('HGET', K_ATTEMPTS, m) or '0'),
    redis.call('HGET', K_DEAD_INFO, m) or '',
    redis.call('SISMEMBER', K_CANCELLED, m),
    redis.call('EXISTS', K_OWNER),
    envelope and envelope[1] or ''
}
