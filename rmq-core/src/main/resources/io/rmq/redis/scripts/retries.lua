-- Lists the messages of one slot that wait for a retry (read only), for the retries view: the same ones stats.lua
-- counts as retrying — the retry ZSET's entries whose time is still ahead (CONCURRENT PRIORITY retries backing off; an
-- ORDERLY slot's failed head), and, CONCURRENT time types, members of store with an attempt count and a score (their
-- retry time) ahead — soonest next attempt first. Bounded: at most ARGV[4] retry entries and ARGV[4] attempts fields
-- are examined (the attempts HASH is walked with HSCAN); beyond that the reply says capped and lists what it examined.
--
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: how many of the slot's retries to skip; ARGV[3]: the most to return (0: count only)
-- ARGV[4]: the most retry entries, and the most attempts fields, to examine
-- Returns: { total, capped (0/1), Redis now (ms), member1, next attempt ms 1, failed attempts 1, error1, envelope1,
--            member2, ... } where total counts the slot's retries (among those examined), error is the errors HASH's
--   "failed at ms\nlast error" or '' (failures recorded before it existed), envelope the stored envelope or ''
--#include _common.lua

local is_priority = ARGV[1] == '1'
local skip, want, cap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = now_ms()
local ordered = redis.call('EXISTS', K_OWNER) == 1
local found, seen, capped = {}, {}, 0

local backing_off = redis.call('ZRANGEBYSCORE', K_RETRY, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, cap)
for i = 1, #backing_off, 2 do
    seen[backing_off[i]] = true
    found[#found + 1] = { backing_off[i], tonumber(backing_off[i + 1]) }
end
if #backing_off / 2 >= cap and redis.call('ZCOUNT', K_RETRY, '(' .. now, '+inf') > cap then
    capped = 1
end

if not is_priority and not ordered and redis.call('EXISTS', K_ATTEMPTS) == 1 then
    -- CONCURRENT time types wait for their retry in store; an attempt count marks a message that failed
    local cursor, examined = '0', 0
    repeat
        local page = redis.call('HSCAN', K_ATTEMPTS, cursor, 'COUNT', 500)
        cursor = page[1]
        local fields = {}
        for i = 1, #page[2], 2 do fields[#fields + 1] = page[2][i] end
        if #fields > 0 then
            local scores = redis.call('ZMSCORE', K_STORE, unpack(fields))
            for j, member in ipairs(fields) do
                if scores[j] and tonumber(scores[j]) > now and not seen[member] then
                    seen[member] = true
                    found[#found + 1] = { member, tonumber(scores[j]) }
                end
            end
        end
        examined = examined + #fields
    until cursor == '0' or examined >= cap
    if cursor ~= '0' then capped = 1 end
end

if want > 0 then
    -- (a count alone needs no order: the sort is most of a large slot's cost)
    table.sort(found, function(a, b)
        if a[2] ~= b[2] then return a[2] < b[2] end
        return a[1] < b[1]
    end)
end

local out = { #found, capped, now }
local members = {}
for i = skip + 1, math.min(skip + want, #found) do members[#members + 1] = found[i][1] end
if #members > 0 then
    local attempts = redis.call('HMGET', K_ATTEMPTS, unpack(members))
    local errors = redis.call('HMGET', K_ERRORS, unpack(members))
    local envelopes = envelopes_of(members, true)
    for j, member in ipairs(members) do
        out[#out + 1] = member
        out[#out + 1] = found[skip + j][2]
        out[#out + 1] = tonumber(attempts[j] or '0')
        out[#out + 1] = errors[j] or ''
        out[#out + 1] = envelopes and envelopes[j] or ''
    end
end
return out
