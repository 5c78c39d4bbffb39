-- A page of one slot's waiting messages (store) in taking order: time types by due time, oldest first; PRIORITY by
-- priority, highest first. Within one score Redis orders members by their bytes (PRIORITY: reversed), so the
-- position (score, member) is a total order; a cursor names the last entry a reader saw. When that entry has left
-- the store meanwhile, its index among the entries of equal score ("tie") stands in for it.
-- The client merges the pages of all slots (ties across slots: lower slot first).
--
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 1 if the topic is PRIORITY (highest first), else 0
-- ARGV[2]: where to start: 'first'; 'after' (entries beyond the cursor score, for slots before the cursor's slot);
--          'at' (entries from the cursor score on, for slots after the cursor's slot); 'cursor' (this is the cursor's
--          slot: entries after the cursor member)
-- ARGV[3]: cursor score; ARGV[4]: cursor member; ARGV[5]: cursor tie (the member's index among equal scores)
-- ARGV[6]: the most entries to return
-- Returns: { member1, score1, tie1, failed attempts1, envelope1, member2, ... } where envelope is the member's stored
--   envelope (payload of an id message, headers), a legacy trace context, or '' when it has none
--#include _common.lua

local desc = ARGV[1] == '1'
local mode, s, limit = ARGV[2], ARGV[3], tonumber(ARGV[6])

-- how many entries come before score `score` in taking order (inclusive: also those with exactly that score)
local function before(score, inclusive)
    if desc then
        return redis.call('ZCOUNT', K_STORE, inclusive and score or '(' .. score, '+inf')
    end
    return redis.call('ZCOUNT', K_STORE, '-inf', inclusive and score or '(' .. score)
end

local start = 0
if mode == 'after' then
    start = before(s, true)
elseif mode == 'at' then
    start = before(s, false)
elseif mode == 'cursor' then
    local score = redis.call('ZSCORE', K_STORE, ARGV[4])
    if score and tonumber(score) == tonumber(s) then
        start = (desc and redis.call('ZREVRANK', K_STORE, ARGV[4]) or redis.call('ZRANK', K_STORE, ARGV[4])) + 1
    else
        start = before(s, false) + tonumber(ARGV[5])
    end
end

local page
if desc then
    page = redis.call('ZREVRANGE', K_STORE, start, start + limit - 1, 'WITHSCORES')
else
    page = redis.call('ZRANGE', K_STORE, start, start + limit - 1, 'WITHSCORES')
end
local out, first_of = {}, {}
local members = {}
for i = 1, #page, 2 do members[#members + 1] = page[i] end
local failures = #members > 0 and redis.call('HMGET', K_ATTEMPTS, unpack(members)) or {}
local envelopes = envelopes_of(members, true)
for j, member in ipairs(members) do
    local score = page[2 * j]
    if not first_of[score] then first_of[score] = before(score, false) end
    out[#out + 1] = member
    out[#out + 1] = score
    out[#out + 1] = start + j - 1 - first_of[score]
    out[#out + 1] = tonumber(failures[j] or '0')
    out[#out + 1] = envelopes and envelopes[j] or ''
end
return out
