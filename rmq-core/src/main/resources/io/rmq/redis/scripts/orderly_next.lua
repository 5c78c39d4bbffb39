-- One step of an ORDERLY slot's owner (see _orderly.lua), one call per batch: settles what it handled since its last
-- call, then hands it the next messages in order. Fenced: nothing happens unless `epoch` still holds the slot.
--   1. acked members leave prepare (and their attempt counts are forgotten);
--   2. a failed member (the head) counts an attempt: it stays at the head until its retry time, or goes to dead past
--      max retries (or at once when forced: unreadable body) and the slot moves on;
--   3. with batch > 0: hands over what prepare holds (taken earlier, not settled: after a failure, or from a
--      previous owner), head first; unless the head waits for its retry, then the slot is suspended until then;
--      then takes due messages out of store into prepare, in order (time types: score <= now, oldest first;
--      PRIORITY: highest first), skipping a body already in prepare (a duplicate waits until that one is settled);
--      a message that still waits for its retry (a head a graceful release put back) stops the take there, or, as the
--      first one, becomes the held head and suspends the slot until its retry time.
--
-- KEYS[1..12]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace of
--             the slot
-- ARGV[1]: epoch (fencing token); ARGV[2]: 1 if the topic is PRIORITY, else 0; ARGV[3]: batch (0: settle only)
-- ARGV[4]: max retries; ARGV[5..8]: backoff initial ms, multiplier, max ms, jitter; ARGV[9]: random in [0,1)
-- ARGV[10]: n, the number of acked members; ARGV[11..10+n]: the acked members
-- ARGV[11+n]: the failed member, or '' ; ARGV[12+n]: its reason; ARGV[13+n]: its action ('' retry policy, 'd' dead,
--            'x' drop, or ms until its retry; see orderly_fail)
-- ARGV[14+n]: 1 to reply legacy trace contexts too (propagation on; see envelopes_of); 0 or absent otherwise
-- Returns: { status, next due, failed outcome, Redis now (ms), member1, score1, attempt1, envelope1, member2, ... }
--   envelopeN: the envelope stored for the member (or its legacy trace context), '' when none
--   status: 1, 0 when fenced (this instance no longer holds the slot; nothing changed), or 2 when the slot is
--           suspended: its head waits for its retry until `next due`
--   next due: Redis ms when the slot next has work (<= now: at once), the head's retry time while suspended, -1 empty
--   failed outcome: 0 (none), 1 (retry at its time), 2 (dead), 3 (dropped)
--#include _common.lua
--#include _orderly.lua

local now = now_ms()
if orderly_fenced(tonumber(ARGV[1]), now) then
    return { 0, -1, 0, now }
end
local is_priority = ARGV[2] == '1'
local batch = tonumber(ARGV[3])
local with_legacy = ARGV[14 + tonumber(ARGV[10])] == '1'

local n = tonumber(ARGV[10])
if n > 0 then
    local acked = {}
    for i = 11, 10 + n do acked[#acked + 1] = ARGV[i] end
    redis.call('ZREM', K_PREPARE, unpack(acked))
    if redis.call('EXISTS', K_ATTEMPTS) == 1 then redis.call('HDEL', K_ATTEMPTS, unpack(acked)) end
    if redis.call('EXISTS', K_RETRY) == 1 then redis.call('ZREM', K_RETRY, unpack(acked)) end
    if redis.call('EXISTS', K_CANCELLED) == 1 then redis.call('SREM', K_CANCELLED, unpack(acked)) end
    forget_envelopes(acked)
end

local out = { 1, -1, 0, now }
local failed = ARGV[11 + n]
if failed ~= '' and redis.call('ZSCORE', K_PREPARE, failed) then
    local failures = tonumber(redis.call('HGET', K_ATTEMPTS, failed) or '0') + 1
    local retry_at = now + backoff_ms(failures, tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]),
        tonumber(ARGV[8]), tonumber(ARGV[9]))
    out[3] = orderly_fail(failed, now, is_priority, tonumber(ARGV[4]), retry_at, ARGV[12 + n], ARGV[13 + n])
end

-- what prepare holds comes first (but not what was cancelled meanwhile); a head waiting for its retry suspends the slot
local held = orderly_held(is_priority, math.max(batch, 1))
if orderly_drop_cancelled(held) then
    held = orderly_held(is_priority, math.max(batch, 1))
end
if #held > 0 then
    local retry_at = redis.call('ZSCORE', K_RETRY, held[1])
    if retry_at and tonumber(retry_at) > now then
        out[1] = 2
        out[2] = retry_at
        return out
    end
    out[2] = now
    if batch == 0 then
        return out
    end
    if retry_at then
        redis.call('ZREM', K_RETRY, held[1])
    end
    local members = {}
    for i = 1, #held, 2 do members[#members + 1] = held[i] end
    local failures = redis.call('HMGET', K_ATTEMPTS, unpack(members))
    local envelopes = envelopes_of(members, with_legacy)
    for j, member in ipairs(members) do
        out[#out + 1] = member
        out[#out + 1] = held[2 * j]
        out[#out + 1] = tonumber(failures[j] or '0') + 1
        out[#out + 1] = envelopes and envelopes[j] or ''
    end
end

local taken, skipped = #held / 2, 0
local any_failures = redis.call('EXISTS', K_ATTEMPTS) == 1
-- a head a graceful release put back into store while it waited for its retry (see _orderly.lua) has its retry time
-- here: it stops the step (nothing behind it is taken); taken as the first message of a step, it is the held head
-- again and the slot stays suspended until then
local retries = redis.call('EXISTS', K_RETRY) == 1
local suspended_until = nil
while batch > 0 and taken < batch and skipped < 10 * batch + 100 and not suspended_until do
    local want = batch - taken
    local page = due_page(is_priority, now, skipped, want)
    if #page == 0 then break end
    local members = {}
    for i = 1, #page, 2 do members[#members + 1] = page[i] end
    local in_flight = redis.call('ZMSCORE', K_PREPARE, unpack(members))
    local retry_times = retries and redis.call('ZMSCORE', K_RETRY, unpack(members)) or {}
    local take, add = {}, {}
    local stop = false
    for j, member in ipairs(members) do
        if in_flight[j] then
            skipped = skipped + 1
        else
            local retry_at = retry_times[j] and tonumber(retry_times[j])
            if retry_at and retry_at > now then
                if taken + #take == 0 then
                    suspended_until = retry_at
                    take[1] = member
                    add[1] = page[2 * j]
                    add[2] = member
                end
                stop = true
                break
            end
            if retry_at then
                redis.call('ZREM', K_RETRY, member)
            end
            take[#take + 1] = member
            add[#add + 1] = page[2 * j]
            add[#add + 1] = member
        end
    end
    if #take > 0 then
        redis.call('ZREM', K_STORE, unpack(take))
        -- a cancel mark belongs to an earlier delivery that is over; this one starts clean
        if redis.call('EXISTS', K_CANCELLED) == 1 then redis.call('SREM', K_CANCELLED, unpack(take)) end
        redis.call('ZADD', K_PREPARE, unpack(add))
        if suspended_until then
            out[1] = 2
            out[2] = suspended_until
            return out
        end
        local failures = any_failures and redis.call('HMGET', K_ATTEMPTS, unpack(take)) or {}
        local envelopes = envelopes_of(take, with_legacy)
        for j, member in ipairs(take) do
            out[#out + 1] = member
            out[#out + 1] = add[2 * j - 1]
            out[#out + 1] = tonumber(failures[j] or '0') + 1
            out[#out + 1] = envelopes and envelopes[j] or ''
        end
        taken = taken + #take
    end
    if stop or #page < 2 * want then break end
end

if #out > 4 then
    out[2] = now
elseif is_priority then
    if redis.call('ZCARD', K_STORE) > skipped then out[2] = now end
else
    local first = redis.call('ZRANGE', K_STORE, skipped, skipped, 'WITHSCORES')
    if #first > 0 then out[2] = first[2] end
end
return out
