-- Reads a page of the dead queue of one slot, oldest death first, with each entry's details.
--
-- KEYS[1..11]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg of the slot
-- ARGV[1]: offset, ARGV[2]: count
-- Returns: { member1, died-at ms 1, info1, member2, ... } where info is "attempts\npriority\nlast error" or ''
--#include _common.lua

local page = redis.call('ZRANGE', K_DEAD, tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1, 'WITHSCORES')
local out = {}
for i = 1, #page, 2 do
    out[#out + 1] = page[i]
    out[#out + 1] = page[i + 1]
    out[#out + 1] = redis.call('HGET', K_DEAD_INFO, page[i]) or ''
end
return out
