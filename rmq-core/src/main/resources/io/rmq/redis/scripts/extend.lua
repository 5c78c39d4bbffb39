-- Extends leases of deliveries still being handled: the prepare score moves to now + lease, only where it still
-- equals the token the consumer holds. The new deadline is the new token.
--
-- KEYS[1..9]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled of the slot
-- ARGV[1]: lease in ms
-- ARGV[2..]: member1, token1, member2, token2, ...
-- Returns: array per member: the new token (deadline ms), or 0 when fenced (lease no longer held)
--#include _common.lua

local deadline = now_ms() + tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV, 2 do
    local member, token = ARGV[i], tonumber(ARGV[i + 1])
    local score = redis.call('ZSCORE', K_PREPARE, member)
    if score and tonumber(score) == token then
        redis.call('ZADD', K_PREPARE, 'XX', deadline, member)
        out[#out + 1] = deadline
    else
        out[#out + 1] = 0
    end
end
return out
