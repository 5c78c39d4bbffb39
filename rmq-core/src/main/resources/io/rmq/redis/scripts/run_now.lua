-- Makes messages of one slot due now ("run now"): a message waiting for its retry gets its backoff ended (the retry
-- ZSET's time — PRIORITY backing off, an ORDERLY slot's failed head — becomes now, and it comes back as a retry always
-- does: PRIORITY with its priority, ORDERLY still at its group's head), and a time-ordered message waiting in store
-- (for its time or for its retry) gets due time now. A PRIORITY message waiting in store is due already (its place is
-- its priority: reschedule.lua gives it a new one) and is left alone, as are messages in flight, dead or absent (a
-- copy waiting in store while another is in flight is waiting: it becomes due, and pops take it once the other ends).
-- The attempt count stays: a run that fails again counts as the next attempt. Wakes sleeping consumers.
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2..]: the members (serialized body, or 0xFF + id)
-- Returns: how many of them are due now because of this call or were due already (waiting or retrying)
--#include _common.lua
write_when_full()

local is_priority = ARGV[1] == '1'
local now = now_ms()
local done, retries_ended = 0, 0
for i = 2, #ARGV do
    local m = ARGV[i]
    local retry_at = redis.call('ZSCORE', K_RETRY, m)
    if retry_at then
        if tonumber(retry_at) > now then
            redis.call('ZADD', K_RETRY, 'XX', now, m)
        end
        retries_ended = retries_ended + 1
        done = done + 1
    elseif not is_priority then
        local due = redis.call('ZSCORE', K_STORE, m)
        if due then
            if tonumber(due) > now then
                redis.call('ZADD', K_STORE, 'XX', now, m)
                wake_if_first(m, false, now)
            end
            done = done + 1
        end
    end
end
if retries_ended > 0 then
    -- retries come back through the next pop (or the ordered slot's next step): tell sleepers that it is due now
    redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. now)
end
return done
