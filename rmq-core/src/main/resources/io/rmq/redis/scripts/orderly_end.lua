-- Ends ORDERLY consumption of one slot, so that CONCURRENT consumers may take it: what prepare holds (left by an
-- owner that died) goes back to store with its score (merging with a waiting duplicate as a retry does), retry times
-- are dropped, and the owner key is deleted. Refused while an owner still holds the slot.
--
-- KEYS[1..12]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace of
--             the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- Returns: how many messages went back to store, or -1 when an owner still holds the slot
--#include _common.lua
--#include _orderly.lua

local now = now_ms()
if tonumber(redis.call('HGET', K_OWNER, 'until') or '0') > now then
    return -1
end
local returned = orderly_return_held(ARGV[1] == '1', now)
-- ORDERLY retry times (of heads put back by a release, too): CONCURRENT consumers keep their own in store or,
-- PRIORITY, in this ZSET with the priority beside it, which these do not have
redis.call('DEL', K_RETRY, K_OWNER)
return returned
