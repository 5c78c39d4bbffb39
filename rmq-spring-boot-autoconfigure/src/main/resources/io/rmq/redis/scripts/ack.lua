-- Acknowledges deliveries: removes each member from prepare if, and only if, its prepare score still equals the
-- lease token the consumer holds (fencing: a consumer whose lease expired cannot remove a newer delivery).
-- A duplicate of the body waiting in store is untouched and will be delivered on its own.
--
-- KEYS[1..7]: store, prepare, dead, attempts, dead-info, retry, priority of the slot
-- ARGV: member1, token1, member2, token2, ...
-- Returns: array with 1 (acked) or 0 (fenced: lease no longer held) per member
--#include _common.lua

local members = {}
for i = 1, #ARGV, 2 do members[#members + 1] = ARGV[i] end
local current = redis.call('ZMSCORE', K_PREPARE, unpack(members))
local out, acked = {}, {}
for j, member in ipairs(members) do
    if current[j] and tonumber(current[j]) == tonumber(ARGV[2 * j]) then
        acked[#acked + 1] = member
        out[j] = 1
    else
        out[j] = 0
    end
end
if #acked > 0 then
    redis.call('ZREM', K_PREPARE, unpack(acked))
    -- A copy still backing off (PRIORITY retry) keeps its attempt count and priority.
    local forget = acked
    if redis.call('EXISTS', K_RETRY) == 1 then
        forget = {}
        local retrying = redis.call('ZMSCORE', K_RETRY, unpack(acked))
        for j, member in ipairs(acked) do
            if not retrying[j] then forget[#forget + 1] = member end
        end
    end
    -- most slots have no failures and no priorities to forget: skip the multi-member HDELs then
    if #forget > 0 and redis.call('EXISTS', K_ATTEMPTS) == 1 then
        redis.call('HDEL', K_ATTEMPTS, unpack(forget))
    end
    if #forget > 0 and redis.call('EXISTS', K_PRIORITY) == 1 then
        redis.call('HDEL', K_PRIORITY, unpack(forget))
    end
end
return out
