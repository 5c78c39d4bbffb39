-- One step of an ORDERLY slot's owner (see _orderly.lua): settles what it handled since its last step, then hands it
-- the next messages. Fenced: nothing happens unless `epoch` still holds the slot. A slot's messages run in lanes, one
-- per group (see orderly_lane): the owner handles different lanes in parallel and each lane strictly in order, so
-- the script never hands out a message that could overtake an unsettled earlier one of its lane:
--   1. acked members leave prepare (and their attempt counts are forgotten);
--   2. each failed member counts an attempt: it stays in prepare until its retry time (the retry ZSET), which suspends
--      its lane; or goes to dead past max retries (or at once when forced) and its lane moves on;
--   3. returned members (taken, not started: behind a failure of their lane, or left when the owner let go of them)
--      go back to store with their score, so they are taken again in order;
--   4. with batch > 0, hands over: with `resync` (the owner's first step, or after a step whose outcome it never
--      learnt) every held member of prepare that is not a head waiting for its retry (a held member behind such a
--      head goes back to store); heads whose retry time has come; then due messages out of store into prepare, in
--      order (time types: score <= now, oldest first; PRIORITY: highest first), skipping those whose lane is
--      suspended (a waiting head in prepare, or one a graceful release put back into store with its retry time) and
--      those behind a body already in prepare (a duplicate waits until that one is settled, and its lane with it).
--      Messages of a lane the owner is still handling are handed out: the owner queues them behind.
--   Messages that expired are never handed out: before step 4 they leave store (see expire_waiting in _common.lua),
--   and held ones that expired leave prepare as they would be handed (dropped, or dead: their lane moves on).
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: epoch (fencing token); ARGV[2]: 1 if the topic is PRIORITY, else 0; ARGV[3]: batch (0: settle only)
-- ARGV[4]: max retries, with the dead-letter retention (see max_retries_of); ARGV[5..8]: backoff initial ms, multiplier, max ms, jitter; ARGV[9]: random in [0,1)
-- ARGV[10]: 1 to reply legacy trace contexts too (propagation on; see envelopes_of); ARGV[11]: 1 to resync
-- ARGV[12]: 1 when the owner holds messages of the slot's common lane (see orderly_lane): only more of it is taken
-- ARGV[13]: n, the number of acked members, then the n acked members
-- then f, the number of failed members, then per failure: member, reason, action ('' retry policy, 'd' dead, 'x' drop,
--      or ms until its retry; see fail() in _common.lua)
-- then r, the number of returned members, then the r members
-- then, optionally, the envelope keys of the n acked members, in their order ('' for an id or a body named none for):
--      the owner names the keys of the bodies that came with an envelope, so that forgetting them needs no digest here
--      (see forget_envelopes in _common.lua)
-- Returns: { status, next due, Redis now, suspended lanes, earliest retry, f, outcome1..outcomef,
--            [expired dropped, expired dead,] member1, score1, attempt1, envelope1, member2, ... }
--   status: 1 + 2 when the two expiry counts follow the outcomes (the slot has messages with an expiry: how many
--           expired before they were handled, dropped and moved to dead) + 4 x the dead members the retention
--           trimmed, or 0 when fenced (this instance no longer holds the slot; nothing changed)
--   next due: Redis ms when the slot next has something to hand out (<= now: at once), -1 when nothing waits
--             (batch 0: -1) or what waits is all behind suspended or busy lanes (scanned up to 10 x batch + 100)
--   suspended lanes: how many lanes wait for a head's retry; earliest retry: the soonest of those times, -1 if none
--   outcomeK: 0 (not held any more), 1 (retry at its time), 2 (dead), 3 (dropped)
--   envelopeN: the envelope stored for the member (or its legacy trace context), '' when none
--#include _common.lua
--#include _envelope.lua
--#include _orderly.lua
write_when_full()

local now = now_ms()
if orderly_fenced(tonumber(ARGV[1]), now) then
    return { 0, -1, now, 0, -1, 0 }
end
local is_priority = ARGV[2] == '1'
local batch = tonumber(ARGV[3])
local max_retries = max_retries_of(ARGV[4])
local initial, multiplier, max, jitter = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local rnd = tonumber(ARGV[9])
local with_legacy = ARGV[10] == '1'
local resync = ARGV[11] == '1'
-- the owner holds messages of the common lane: only more of them are taken until those are done
local serial = ARGV[12] == '1'

-- where the settlement's parts start: n acked members after ARGV[13], f failures after f_at, r returned members after
-- r_at, then (when the owner named them) the acked members' envelope keys at keys_at
local n = tonumber(ARGV[13])
local f_at = 13 + n + 1
local f = tonumber(ARGV[f_at])
local r_at = f_at + 3 * f + 1
local r = tonumber(ARGV[r_at])
local keys_at = r_at + r + 1
-- a resync after a step whose outcome the owner never learnt: the lanes it reports failures or returns of (read
-- before they are settled: a dropped member's envelope goes)
local reported_lanes = {}
if resync then
    local named = {}
    for k = 1, f do named[#named + 1] = ARGV[f_at + 3 * k - 2] end
    for i = 1, r do named[#named + 1] = ARGV[r_at + i] end
    if #named > 0 then
        local lanes = orderly_lanes(named)
        for _, lane in ipairs(lanes) do reported_lanes[lane] = true end
    end
end
if n > 0 then
    local acked = {}
    for i = 14, 13 + n do acked[#acked + 1] = ARGV[i] end
    redis.call('ZREM', K_PREPARE, unpack(acked))
    if redis.call('EXISTS', K_ATTEMPTS) == 1 then redis.call('HDEL', K_ATTEMPTS, unpack(acked)) end
    if redis.call('EXISTS', K_ERRORS) == 1 then redis.call('HDEL', K_ERRORS, unpack(acked)) end
    if redis.call('EXISTS', K_RETRY) == 1 then redis.call('ZREM', K_RETRY, unpack(acked)) end
    if redis.call('EXISTS', K_CANCELLED) == 1 then redis.call('SREM', K_CANCELLED, unpack(acked)) end
    local named = nil
    if #ARGV >= keys_at + n - 1 then
        named = {}
        for i = 1, n do named[i] = ARGV[keys_at + i - 1] end
    end
    start_windows(acked, named) -- handled: deduplication windows start
    forget_envelopes(acked, named, true) -- out of prepare (above), handled
end

local outcomes = {}
for k = 1, f do
    local member, reason, action = ARGV[f_at + 3 * k - 2], ARGV[f_at + 3 * k - 1], ARGV[f_at + 3 * k]
    outcomes[k] = 0
    if redis.call('ZSCORE', K_PREPARE, member) then
        outcomes[k] = fail(member, now, is_priority, max_retries, initial, multiplier, max, jitter, spread(rnd, k),
            reason, action, ORDERLY_FAILURE)
    end
end

for i = r_at + 1, r_at + r do
    local member = ARGV[i]
    local score = redis.call('ZSCORE', K_PREPARE, member)
    if score then
        redis.call('ZREM', K_PREPARE, member)
        if take_cancel_mark(member) then
            orderly_drop(member)
        else
            return_to_store(member, score, is_priority, now)
        end
    end
end

-- messages that expired leave store before anything is handed out; held ones are checked as they are handed (hand)
local has_expiry = batch > 0 and redis.call('EXISTS', K_EXPIRY) == 1
local expired_dropped, expired_dead = 0, 0
if has_expiry then
    expired_dropped, expired_dead = expire_waiting(now, now, is_priority, 10 * batch + 100)
end

-- lanes waiting for a head's retry (the head in prepare, or put back into store by a release); past MAX_WAITING of
-- them the slot takes nothing new until some are settled (what a step reads stays bounded: Lua's unpack refuses
-- ~8,000 values, and each waiting head costs every step an envelope look-up)
local MAX_WAITING = 1000
local retries = redis.call('EXISTS', K_RETRY) == 1
local suspended, n_suspended, earliest = {}, 0, -1
local too_many = false
if retries then
    local first_retry = redis.call('ZRANGEBYSCORE', K_RETRY, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if #first_retry > 0 then
        earliest = tonumber(first_retry[2])
        too_many = redis.call('ZCARD', K_RETRY) > MAX_WAITING
        if too_many then
            n_suspended = redis.call('ZCOUNT', K_RETRY, '(' .. now, '+inf')
        else
            local waiting = redis.call('ZRANGEBYSCORE', K_RETRY, '(' .. now, '+inf')
            local lanes = orderly_lanes(waiting)
            for j = 1, #waiting do
                if not suspended[lanes[j]] then
                    suspended[lanes[j]] = true
                    n_suspended = n_suspended + 1
                end
            end
        end
    end
end

local out = { 1 + 4 * dead_trimmed, -1, now, n_suspended, earliest, f }
for k = 1, f do out[#out + 1] = outcomes[k] end
if batch == 0 then
    return out
end
-- where the expiry counts go (filled in at the end: handing out may expire more)
local expired_at = #out + 1
if has_expiry then
    out[expired_at] = 0
    out[expired_at + 1] = 0
end

-- hands `members` (in prepare, with their prepare scores and envelopes) over, in that order, but for those that
-- expired: they leave prepare (dropped, or dead) instead. Returns how many were handed over.
local function hand(members, scores, envelopes)
    if #members == 0 then return 0 end
    if has_expiry then
        local expires = redis.call('ZMSCORE', K_EXPIRY, unpack(members))
        local kept, kept_scores, kept_envelopes = {}, {}, {}
        for j, member in ipairs(members) do
            local expires_at = expires[j] and tonumber(expires[j])
            if expires_at and expires_at <= now then
                if EXPIRED_TO_DEAD then
                    bury(member, now, redis.call('HGET', K_ATTEMPTS, member) or 0,
                        ORDERLY_FAILURE.leave(member, is_priority), expired_reason(expires_at))
                    expired_dead = expired_dead + 1
                else
                    orderly_drop(member)
                    expired_dropped = expired_dropped + 1
                end
            else
                kept[#kept + 1] = member
                kept_scores[#kept_scores + 1] = scores[j]
                kept_envelopes[#kept_envelopes + 1] = envelopes and envelopes[j] or ''
            end
        end
        if #kept == 0 then return 0 end
        members, scores, envelopes = kept, kept_scores, kept_envelopes
    end
    local failures = redis.call('HMGET', K_ATTEMPTS, unpack(members))
    for j, member in ipairs(members) do
        out[#out + 1] = member
        out[#out + 1] = scores[j]
        out[#out + 1] = tonumber(failures[j] or '0') + 1
        out[#out + 1] = envelopes and envelopes[j] or ''
    end
    return #members
end

local handed = 0
if resync then
    local held = orderly_held(is_priority, ORDERLY_HELD_MAX)
    if orderly_drop_cancelled(held) then
        held = orderly_held(is_priority, ORDERLY_HELD_MAX)
    end
    if #held > 0 then
        local members = {}
        for i = 1, #held, 2 do members[#members + 1] = held[i] end
        local envelopes, lanes = orderly_envelopes(members, with_legacy)
        local retry_times = retries and redis.call('ZMSCORE', K_RETRY, unpack(members)) or {}
        -- the lanes of held heads that wait for their retry, whatever else is known (too many to read them all)
        for j = 1, #members do
            if retry_times[j] and tonumber(retry_times[j]) > now then suspended[lanes[j]] = true end
        end
        local give, scores, given_envelopes = {}, {}, {}
        -- the common lane is not handed out beside group lanes (an owner of an older engine held both): whichever
        -- comes second, and all after it, goes back in line, in order. Nor is anything held of a lane this step
        -- reported a failure or a return of: the owner holds nothing else of it, so what is held was taken by a step
        -- whose outcome it never learnt, and goes back in line behind what was returned
        local grouped, closed = false, false
        for j, member in ipairs(members) do
            local retry_at = retry_times[j] and tonumber(retry_times[j])
            local lane = lanes[j]
            if retry_at and retry_at > now then
                -- a head waiting for its retry: it stays, its lane suspended
            elseif closed or suspended[lane] or reported_lanes[lane] or (lane == '' and grouped)
                    or (lane ~= '' and serial) then
                closed = closed or not (suspended[lane] or reported_lanes[lane])
                redis.call('ZREM', K_PREPARE, member)
                return_to_store(member, held[2 * j], is_priority, now)
            else
                if retry_at then redis.call('ZREM', K_RETRY, member) end
                give[#give + 1] = member
                scores[#scores + 1] = held[2 * j]
                given_envelopes[#given_envelopes + 1] = envelopes and envelopes[j] or ''
                if lane == '' then serial = true else grouped = true end
            end
        end
        handed = hand(give, scores, given_envelopes)
    end
elseif retries then
    -- heads whose retry time has come, in prepare (those a release put back into store are taken from there below)
    local ready = redis.call('ZRANGEBYSCORE', K_RETRY, '-inf', now, 'LIMIT', 0, MAX_WAITING)
    if #ready > 0 then
        local scores = redis.call('ZMSCORE', K_PREPARE, unpack(ready))
        local give, given_scores = {}, {}
        for j, member in ipairs(ready) do
            if scores[j] then
                redis.call('ZREM', K_RETRY, member)
                give[#give + 1] = member
                given_scores[#given_scores + 1] = scores[j]
            end
        end
        if #give > 0 then
            local envelopes, lanes = orderly_envelopes(give, with_legacy)
            handed = hand(give, given_scores, envelopes)
            for _, lane in ipairs(lanes) do
                if lane == '' then serial = true end
            end
        end
    end
end

-- due messages out of store, lane by lane in order. A message of the common lane ('') may belong to any group: it is
-- taken only when nothing else of the slot is held or waits (prepare empty, no lane waiting for a retry, nothing
-- handed or taken in this step) or only common-lane messages are held (by the owner, or handed in this step), and
-- then only more of the common lane; one that cannot be taken is a barrier: the step takes nothing after it (the
-- owner's next settling, once the slot is quiet, takes it). While a common-lane head waits for its retry (or too
-- many lanes wait) nothing is taken.
-- nor while the owner holds so much that a resync could not read it all (see ORDERLY_HELD_MAX)
local common_waits = suspended[''] == true or too_many
    or redis.call('ZCARD', K_PREPARE) + batch > ORDERLY_HELD_MAX
local taken, skipped = 0, 0
local budget = 10 * batch + 100
local blocked = {}
local common_taken, barrier = serial, false
while not common_waits and not barrier and taken < batch and skipped < budget do
    local want = batch - taken
    local page = due_page(is_priority, now, skipped, want)
    if #page == 0 then break end
    local members = {}
    for i = 1, #page, 2 do members[#members + 1] = page[i] end
    local in_flight = redis.call('ZMSCORE', K_PREPARE, unpack(members))
    local retry_times = retries and redis.call('ZMSCORE', K_RETRY, unpack(members)) or {}
    local envelopes, lanes = orderly_envelopes(members, with_legacy)
    local take, add, scores, taken_envelopes = {}, {}, {}, {}
    for j, member in ipairs(members) do
        local lane = lanes[j]
        local retry_at = retry_times[j] and tonumber(retry_times[j])
        if lane == '' and not common_taken and (handed + taken + #take > 0 or n_suspended > 0 or in_flight[j]
                or (retry_at and retry_at > now) or redis.call('ZCARD', K_PREPARE) > 0) then
            barrier = true
            break
        elseif lane ~= '' and common_taken then
            barrier = true
            break
        elseif in_flight[j] or suspended[lane] or blocked[lane] then
            skipped = skipped + 1
            blocked[lane] = true
        elseif retry_at and retry_at > now then
            -- a head a graceful release put back while it waited for its retry: its lane waits with it
            skipped = skipped + 1
            suspended[lane] = true
            n_suspended = n_suspended + 1
            if earliest < 0 or retry_at < earliest then earliest = retry_at end
        else
            if retry_at then redis.call('ZREM', K_RETRY, member) end
            take[#take + 1] = member
            add[#add + 1] = page[2 * j]
            add[#add + 1] = member
            scores[#scores + 1] = page[2 * j]
            taken_envelopes[#taken_envelopes + 1] = envelopes and envelopes[j] or ''
            if lane == '' then common_taken = true end
        end
    end
    if #take > 0 then
        redis.call('ZREM', K_STORE, unpack(take))
        -- a cancel mark belongs to an earlier delivery that is over; this one starts clean
        if redis.call('EXISTS', K_CANCELLED) == 1 then redis.call('SREM', K_CANCELLED, unpack(take)) end
        redis.call('ZADD', K_PREPARE, unpack(add))
        hand(take, scores, taken_envelopes)
        taken = taken + #take
    end
    if barrier or #page < 2 * want then break end
end
out[4] = n_suspended
out[5] = earliest
if has_expiry then
    out[1] = 1 + 2 + 4 * dead_trimmed
    out[expired_at] = expired_dropped
    out[expired_at + 1] = expired_dead
end

if handed + taken > 0 then
    out[2] = now
elseif common_waits or barrier or skipped >= budget then
    -- what waits is behind the common lane in flight, a barrier, or suspended or busy lanes: the next retry, or the
    -- owner's next settling, moves it
    out[2] = -1
elseif is_priority then
    if redis.call('ZCARD', K_STORE) > skipped then out[2] = now end
else
    local first = redis.call('ZRANGE', K_STORE, skipped, skipped, 'WITHSCORES')
    if #first > 0 then out[2] = first[2] end
end
return out
