-- Lease-expiry sweep: every prepare entry whose deadline has passed counts as a failed attempt ("lease expired")
-- and is retried after its backoff, or moved to dead past max retries. Atomic and idempotent: any consumer may
-- run it at any time; an entry is moved once.
--
-- KEYS[1..7]: store, prepare, dead, attempts, dead-info, retry, priority of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: max retries
-- ARGV[3..6]: backoff initial ms, multiplier, max ms, jitter (0..1)
-- ARGV[7]: a random number in [0,1) for the jitter
-- ARGV[8]: the most entries to move in this call
-- Returns: { moved to retry, moved to dead }
--#include _common.lua

local is_priority = ARGV[1] == '1'
local max_retries = tonumber(ARGV[2])
local initial, multiplier, max, jitter = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local rnd = tonumber(ARGV[7])
local now = now_ms()

local expired = redis.call('ZRANGEBYSCORE', K_PREPARE, '-inf', '(' .. now, 'LIMIT', 0, tonumber(ARGV[8]))
local retried, dead = 0, 0
for i, member in ipairs(expired) do
    redis.call('ZREM', K_PREPARE, member)
    if fail(member, now, is_priority, max_retries, initial, multiplier, max, jitter, spread(rnd, i),
            'lease expired (consumer died, stalled or lost its connection)', false) == 2 then
        dead = dead + 1
    else
        retried = retried + 1
    end
end
return { retried, dead }
