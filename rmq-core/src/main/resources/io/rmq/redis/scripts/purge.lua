-- Deletes waiting messages of one slot, a chunk per call: store entries, and (PRIORITY) retries backing off, with
-- what the slot keeps about them. In-flight deliveries and the dead queue are untouched; an ORDERLY slot's
-- suspended head is in flight (held by its owner) and stays. Trace contexts go with the bodies (unless a copy is
-- still in flight or dead).
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: the most entries to delete in this call
-- Returns: the number deleted (less than ARGV[2]: the slot has no waiting messages left)
--#include _common.lua
write_when_full()

local limit = tonumber(ARGV[2])
local function purge(key)
    local members = redis.call('ZRANGE', key, 0, limit - 1)
    if #members == 0 then
        return 0
    end
    redis.call('ZREM', key, unpack(members))
    -- attempt counts and priorities belong to an in-flight copy too: keep those
    local in_flight = redis.call('ZMSCORE', K_PREPARE, unpack(members))
    for j, member in ipairs(members) do
        if not in_flight[j] and not redis.call('ZSCORE', K_RETRY, member) then
            redis.call('HDEL', K_ATTEMPTS, member)
            redis.call('HDEL', K_ERRORS, member)
            redis.call('HDEL', K_PRIORITY, member)
        end
    end
    forget_envelopes(members)
    return #members
end

local deleted = purge(K_STORE)
if deleted < limit and ARGV[1] == '1' and redis.call('EXISTS', K_OWNER) == 0 then
    limit = limit - deleted
    deleted = deleted + purge(K_RETRY)
end
return deleted
