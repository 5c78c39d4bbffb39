-- Reads a page of what is in flight in one slot (its prepare ZSET), soonest lease deadline first.
--
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: offset, ARGV[2]: count
-- Returns: { member1, score1, failed attempts1 (0 when none), envelope1, member2, ... } where the score is the lease
--   token (deadline ms + k/1024) for CONCURRENT deliveries and the store score for ORDERLY ones, and envelope the
--   member's stored envelope (payload of an id message, headers), a legacy trace context, or '' when it has none
--#include _common.lua

local page = redis.call('ZRANGE', K_PREPARE, tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1,
    'WITHSCORES')
local members = {}
for i = 1, #page, 2 do members[#members + 1] = page[i] end
local envelopes = envelopes_of(members, true)
local out = {}
for j, member in ipairs(members) do
    out[#out + 1] = member
    out[#out + 1] = page[2 * j]
    out[#out + 1] = tonumber(redis.call('HGET', K_ATTEMPTS, member) or '0')
    out[#out + 1] = envelopes and envelopes[j] or ''
end
return out
