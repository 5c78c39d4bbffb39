-- Acknowledges deliveries: removes each member from prepare if, and only if, its prepare score still equals the
-- lease token the consumer holds (fencing: a consumer whose lease expired cannot remove a newer delivery).
-- A duplicate of the body waiting in store is untouched and will be delivered on its own.
--
-- KEYS[1..7]: store, prepare, dead, attempts, dead-info, retry, priority of the slot
-- ARGV: member1, token1, member2, token2, ...
-- Returns: array with 1 (acked) or 0 (fenced: lease no longer held) per member
--#include _common.lua

local out = {}
for i = 1, #ARGV, 2 do
    local member, token = ARGV[i], tonumber(ARGV[i + 1])
    local score = redis.call('ZSCORE', K_PREPARE, member)
    if score and tonumber(score) == token then
        redis.call('ZREM', K_PREPARE, member)
        -- A copy still backing off (PRIORITY retry) keeps its attempt count and priority.
        if not redis.call('ZSCORE', K_RETRY, member) then
            redis.call('HDEL', K_ATTEMPTS, member)
            redis.call('HDEL', K_PRIORITY, member)
        end
        out[#out + 1] = 1
    else
        out[#out + 1] = 0
    end
end
return out
