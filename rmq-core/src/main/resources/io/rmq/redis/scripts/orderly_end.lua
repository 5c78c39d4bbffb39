-- Ends ORDERLY consumption of one slot, so that CONCURRENT consumers may take it: what prepare holds goes back to
-- store with its score (merging with a waiting duplicate as a retry does), retry times are dropped, and the owner
-- key is deleted. Refused while an owner still holds the slot.
--
-- KEYS[1..9]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- Returns: how many messages went back to store, or -1 when an owner still holds the slot
--#include _common.lua

local now = now_ms()
if tonumber(redis.call('HGET', K_OWNER, 'until') or '0') > now then
    return -1
end
local held = redis.call('ZRANGE', K_PREPARE, 0, -1, 'WITHSCORES')
for i = 1, #held, 2 do
    redis.call('ZREM', K_PREPARE, held[i])
    redis.call('ZREM', K_RETRY, held[i])
    if take_cancel_mark(held[i]) then
        redis.call('HDEL', K_ATTEMPTS, held[i]) -- cancelled while held: it does not come back
    else
        return_to_store(held[i], held[i + 1], ARGV[1] == '1', now)
    end
end
redis.call('DEL', K_OWNER)
return #held / 2
