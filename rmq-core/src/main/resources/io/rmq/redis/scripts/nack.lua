-- Reports failed deliveries (the handler threw, or the body could not be read): each member leaves prepare, if
-- the token still matches, and follows its action (see fail() in _common.lua): retried after its backoff or, past max
-- retries, moved to dead with the reason; dead at once; dropped; or retried after a given delay.
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..17]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe, lease-seq, skipped of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: max retries (failures beyond this many go to dead), with the dead-letter retention (see max_retries_of)
-- ARGV[3..6]: backoff initial ms, multiplier, max ms, jitter (0..1)
-- ARGV[7]: a random number in [0,1) for the jitter
-- ARGV[8..]: member1, token1, reason1, action1, member2, ...   (token in 1/1024 ms, as pop.lua and extend.lua reply
--           it; action: '' retry policy, 'd' dead, 'x' drop, or ms)
-- Returns: array per member: 0 fenced (lease no longer held), 1 retry scheduled, 2 dead, 3 dropped (by its action, or
--          because it was cancelled while in flight); then how many dead members the retention trimmed
--#include _common.lua
write_when_full()

local is_priority = ARGV[1] == '1'
local max_retries = max_retries_of(ARGV[2])
local initial, multiplier, max, jitter = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local rnd = tonumber(ARGV[7])
local now = now_ms()

local out = {}
for i = 8, #ARGV, 4 do
    local member, token, reason, action = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
    local score = redis.call('ZSCORE', K_PREPARE, member)
    if score and token_of(score) == token then
        redis.call('ZREM', K_PREPARE, member)
        out[#out + 1] = fail(member, now, is_priority, max_retries, initial, multiplier, max, jitter,
            spread(rnd, i), reason, action, CONCURRENT_FAILURE)
    else
        out[#out + 1] = 0
    end
end
out[#out + 1] = dead_trimmed
return out
