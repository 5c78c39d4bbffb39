-- Extends leases of deliveries still being handled, only where the prepare score still equals the token the consumer
-- holds: those get one new lease token (see issue_lease in _common.lua: now + lease, raised above every token the
-- slot issued before), which becomes their prepare score. The new token fences the old one.
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..17]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe, lease-seq, skipped of the slot
-- ARGV[1]: lease in ms
-- ARGV[2..]: member1, token1, member2, token2, ...   (tokens in 1/1024 ms, as pop.lua and this script reply them)
-- Returns: array per member: the new token (1/1024 ms), or 0 when fenced (lease no longer held)
--#include _common.lua
write_when_full()

local now = now_ms()
local token, token_arg = nil, nil
local out = {}
for i = 2, #ARGV, 2 do
    local member, held = ARGV[i], tonumber(ARGV[i + 1])
    local score = redis.call('ZSCORE', K_PREPARE, member)
    if score and token_of(score) == held then
        if not token then
            token = issue_lease(now, tonumber(ARGV[1]))
            token_arg = string.format('%.17g', token)
        end
        redis.call('ZADD', K_PREPARE, 'XX', token_arg, member)
        out[#out + 1] = token * TOKEN_UNITS
    else
        out[#out + 1] = 0
    end
end
return out
