-- Searches part of the dead queue of one slot (read only), oldest death first: the entries whose last error contains
-- a text (case-insensitive for ASCII letters) and whose id (messages sent with one) or body (after a grouped
-- member's group) starts with a prefix.
-- Bounded: examines at most ARGV[4] entries from rank ARGV[3] on, so a caller can spread one search budget over the
-- slots and go on where it stopped.
--
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: the error text to look for, lower case ('' any); ARGV[2]: the id or body prefix ('' any)
-- ARGV[3]: the rank to start at; ARGV[4]: the most entries to examine
-- ARGV[5]: how many matches to skip; ARGV[6]: the most matches to return
-- Returns: { examined, matches (among those examined), left (entries after the last one examined), member1,
--            died-at ms 1, info1, envelope1, member2, ... } (info and envelope as dead_page.lua replies them)
--#include _common.lua
--#include _envelope.lua

local needle, prefix = ARGV[1], ARGV[2]
local start, budget = tonumber(ARGV[3]), tonumber(ARGV[4])
local skip, want = tonumber(ARGV[5]), tonumber(ARGV[6])
local size = redis.call('ZCARD', K_DEAD)
local examined, matches = 0, 0
local page_members, page_scores, page_infos = {}, {}, {}

local function matches_prefix(member)
    if prefix == '' then return true end
    if is_id(member) then
        return string.sub(member, 2, #prefix + 1) == prefix
    end
    -- a grouped member's body starts after its group (a damaged one is searched whole)
    local group, length = group_at(member)
    local from = group and group + length or 1
    return string.sub(member, from, from + #prefix - 1) == prefix
end

while examined < budget and start + examined < size do
    local from = start + examined
    local chunk = redis.call('ZRANGE', K_DEAD, from, from + math.min(500, budget - examined) - 1, 'WITHSCORES')
    if #chunk == 0 then break end
    local members = {}
    for i = 1, #chunk, 2 do members[#members + 1] = chunk[i] end
    local infos = redis.call('HMGET', K_DEAD_INFO, unpack(members))
    for j, member in ipairs(members) do
        local info = infos[j] or ''
        local hit = matches_prefix(member)
        if hit and needle ~= '' then
            local err = string.match(info, '^[^\n]*\n[^\n]*\n(.*)$') or ''
            hit = string.find(string.lower(err), needle, 1, true) ~= nil
        end
        if hit then
            matches = matches + 1
            if matches > skip and #page_members < want then
                page_members[#page_members + 1] = member
                page_scores[#page_scores + 1] = chunk[2 * j]
                page_infos[#page_infos + 1] = info
            end
        end
    end
    examined = examined + #members
end

local out = { examined, matches, math.max(0, size - start - examined) }
local envelopes = envelopes_of(page_members, true)
for j, member in ipairs(page_members) do
    out[#out + 1] = member
    out[#out + 1] = page_scores[j]
    out[#out + 1] = page_infos[j]
    out[#out + 1] = envelopes and envelopes[j] or ''
end
return out
