-- Reports failed deliveries (the handler threw, or the body could not be read): each member leaves prepare, if
-- the token still matches, and is retried after its backoff or, past max retries, moved to dead with the reason.
--
-- KEYS[1..8]: store, prepare, dead, attempts, dead-info, retry, priority, owner of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: max retries (failures beyond this many go to dead)
-- ARGV[3..6]: backoff initial ms, multiplier, max ms, jitter (0..1)
-- ARGV[7]: a random number in [0,1) for the jitter
-- ARGV[8]: 1 to send straight to dead (unreadable message), else 0
-- ARGV[9..]: member1, token1, reason1, member2, token2, reason2, ...
-- Returns: array per member: 0 fenced (lease no longer held), 1 retry scheduled, 2 dead
--#include _common.lua

local is_priority = ARGV[1] == '1'
local max_retries = tonumber(ARGV[2])
local initial, multiplier, max, jitter = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local rnd = tonumber(ARGV[7])
local force_dead = ARGV[8] == '1'
local now = now_ms()

local out = {}
for i = 9, #ARGV, 3 do
    local member, token, reason = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
    local score = redis.call('ZSCORE', K_PREPARE, member)
    if score and tonumber(score) == token then
        redis.call('ZREM', K_PREPARE, member)
        out[#out + 1] = fail(member, now, is_priority, max_retries, initial, multiplier, max, jitter,
            spread(rnd, i), reason, force_dead)
    else
        out[#out + 1] = 0
    end
end
return out
