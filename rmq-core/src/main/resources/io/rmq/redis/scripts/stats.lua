-- Queue figures of one slot in one call (read only), for TopicStats, health and the queue-size gauges:
--   waiting   messages in store that are due or wait for their time (or, PRIORITY, for their turn), and PRIORITY
--             retries whose backoff is over (due again: the next pop takes them); not the retrying ones below
--   in flight messages in prepare: leased to a CONCURRENT consumer or held by an ORDERLY slot's owner, except a
--             failed ORDERLY head still waiting for its retry
--   retrying  failed messages whose backoff has not ended yet: the retry ZSET's entries with a time after now
--             (CONCURRENT PRIORITY retries; an ORDERLY slot's failed head, held in prepare or put back into store by
--             a graceful release), and, CONCURRENT time types, members of store with an attempt count and a score
--             (their retry time) after now. Cost: O(retrying + messages that failed and are not settled yet)
--   dead      messages in the dead queue
--   oldest due (time types) the lowest score in store, the earliest due time there (-1: PRIORITY or empty store)
-- waiting + in flight + retrying + dead = every message of the slot once (a body sent again while its earlier copy is
-- in flight is a second message, waiting in store; one sent again while its copy backs off is counted once, retrying).
--
-- KEYS[1..15]: the slot keys (see _common.lua); reads store, prepare, dead, attempts, dead-info, retry, priority,
--              owner and cancelled
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- Returns: { waiting, in flight, retrying, dead, oldest due (ms, -1 if none), Redis now (ms) }
--#include _common.lua

local now = now_ms()
local is_priority = ARGV[1] == '1'
local waiting = redis.call('ZCARD', K_STORE)
local in_flight = redis.call('ZCARD', K_PREPARE)
local dead = redis.call('ZCARD', K_DEAD)
local retrying = 0
local ordered = redis.call('EXISTS', K_OWNER) == 1

-- retries whose time is still ahead: PRIORITY retries back off here and are nowhere else (CONCURRENT); an ORDERLY
-- slot's failed head is here too, and in prepare (held) or in store (put back by a graceful release)
local counted = {}
local backing_off = redis.call('ZRANGEBYSCORE', K_RETRY, '(' .. now, '+inf')
for _, member in ipairs(backing_off) do
    counted[member] = true
    retrying = retrying + 1
    if redis.call('ZSCORE', K_STORE, member) then
        waiting = waiting - 1 -- a head put back, or a body sent again meanwhile: counted once, as retrying
    elseif ordered and redis.call('ZSCORE', K_PREPARE, member) then
        in_flight = in_flight - 1
    end
end
if is_priority and not ordered then
    -- retries whose backoff is over are due again: waiting until a pop takes them back (once: a head an ORDERLY
    -- owner put back is in store already)
    local due = redis.call('ZRANGEBYSCORE', K_RETRY, '-inf', now)
    for i = 1, #due, 500 do
        local chunk = { unpack(due, i, math.min(i + 499, #due)) }
        local in_store = redis.call('ZMSCORE', K_STORE, unpack(chunk))
        for j = 1, #chunk do
            if not in_store[j] then waiting = waiting + 1 end
        end
    end
elseif not is_priority and not ordered and redis.call('EXISTS', K_ATTEMPTS) == 1 then
    -- CONCURRENT time types go back to store at their retry time; an attempt count marks a message that failed
    local failed = redis.call('HKEYS', K_ATTEMPTS)
    for i = 1, #failed, 500 do
        local chunk = { unpack(failed, i, math.min(i + 499, #failed)) }
        local scores = redis.call('ZMSCORE', K_STORE, unpack(chunk))
        for j = 1, #chunk do
            if scores[j] and tonumber(scores[j]) > now and not counted[chunk[j]] then
                retrying = retrying + 1
                waiting = waiting - 1
            end
        end
    end
end

local oldest = -1
if not is_priority then
    local first = redis.call('ZRANGE', K_STORE, 0, 0, 'WITHSCORES')
    if #first > 0 then oldest = tonumber(first[2]) end
end
return { waiting, in_flight, retrying, dead, oldest, now }
