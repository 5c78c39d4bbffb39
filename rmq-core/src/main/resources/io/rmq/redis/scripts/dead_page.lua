-- Reads a page of the dead queue of one slot, oldest death first, with each entry's details.
--
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: offset, ARGV[2]: count
-- Returns: { member1, died-at ms 1, info1, envelope1, member2, ... } where info is "attempts\npriority\nlast error"
--   or '', and envelope the member's stored envelope (payload of an id message, headers), a legacy trace context, or
--   '' when it has none
--#include _common.lua

local page = redis.call('ZRANGE', K_DEAD, tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1, 'WITHSCORES')
local members = {}
for i = 1, #page, 2 do members[#members + 1] = page[i] end
local envelopes = envelopes_of(members, true)
local out = {}
for j, member in ipairs(members) do
    out[#out + 1] = member
    out[#out + 1] = page[2 * j]
    out[#out + 1] = redis.call('HGET', K_DEAD_INFO, member) or ''
    out[#out + 1] = envelopes and envelopes[j] or ''
end
return out
