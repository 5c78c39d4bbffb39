-- Ends ORDERLY consumption of one slot, so that CONCURRENT consumers may take it: what prepare holds (left by an
-- owner that died) goes back to store with its score (merging with a waiting duplicate as a retry does), retry times
-- are dropped, and the owner key is deleted. Refused while an owner still holds the slot: a timed holder until its
-- `until`, a leased one while it is in the live list given (or claimed with a list not older; see own.lua).
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: the Redis ms (membership's clock) at which the live list was read; ARGV[3..]: the live instance ids
-- Returns: how many messages went back to store, or -1 when an owner still holds the slot
--#include _common.lua
--#include _envelope.lua
--#include _orderly.lua
write_when_full()

local now = now_ms()
local owner = redis.call('HMGET', K_OWNER, 'id', 'until', 'listed')
local until_ms = tonumber(owner[2] or '0')
if until_ms > now then
    if until_ms < ORDERLY_LEASED or tonumber(ARGV[2] or '0') <= tonumber(owner[3] or '0') then
        return -1
    end
    for i = 3, #ARGV do
        if ARGV[i] == owner[1] then
            return -1
        end
    end
end
local returned = orderly_return_held(ARGV[1] == '1', now)
-- ORDERLY retry times (of heads put back by a release, too): CONCURRENT consumers keep their own in store or,
-- PRIORITY, in this ZSET with the priority beside it, which these do not have
redis.call('DEL', K_RETRY, K_OWNER)
return returned
