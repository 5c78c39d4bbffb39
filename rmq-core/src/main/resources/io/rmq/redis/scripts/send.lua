-- Single sends (grouped per slot by SlotBatcher; sendBatch, and a call of one message without a trace context, use a
-- native ZADD + a read of the slot's first message instead, see SendWrites.sendBatch / sendOne): writes
-- messages into one slot's store with the merge rule of the topic type, and wakes sleeping consumers when the slot's
-- first message changed (see wake_if_first in _common.lua; checked once per call, not per message).
--   RANGE_MERGE ('range'): due at Redis-now + timeRange, unless the body is already waiting: then it merges and keeps
--                          its original due time (ZADD NX).
--   PRIORITY / FIXED_TIME ('score'): score = priority or due time; a waiting duplicate takes the latest value.
-- Envelopes (modes 'range-env' / 'score-env' only; the plain modes never touch the msg HASH): whatever a message
-- carries besides its member (an id message's payload, headers, the trace context) is stored in the msg HASH under the
-- member's envelope key (see envelope_key in _common.lua), a body's trace context alone as its trace record in the
-- trace HASH, in the same call as the member, and the latest send's
-- envelope wins for every type: a merged send changes the due time by its type's rule but always delivers the newest
-- payload and headers. A send without an envelope ('') leaves whatever is stored.
--
-- KEYS[1..13]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors of the slot (store, msg and trace are written)
-- ARGV[1]: 'range' or 'score'; 'range-env' or 'score-env' when messages carry envelopes
-- ARGV[2]: 1 if the topic is PRIORITY, else 0
-- ARGV[3..]: parameter1, member1, parameter2, member2, ...  (parameter = timeRange ms, priority or due ms)
--            with envelopes: parameter1, member1, envelope1, parameter2, ...  (envelope: encoded, or '' for none)
-- Returns: a string with one digit per message: 1 (added) or 0 (merged into a waiting one, or repeated within this
--          call); one reply element instead of one per message
--#include _common.lua

local mode = ARGV[1]
local range = mode == 'range' or mode == 'range-env'
local with_envelopes = mode == 'range-env' or mode == 'score-env'
local step = with_envelopes and 3 or 2
local is_priority = ARGV[2] == '1'
local now = now_ms()

local was_empty = redis.call('ZCARD', K_STORE) == 0
local first_before = nil
if not is_priority and not was_empty then
    first_before = redis.call('ZRANGE', K_STORE, 0, 0, 'WITHSCORES')
end

-- One ZMSCORE and one multi-member ZADD per call (calls per message are what a script pays for), up to 1000
-- messages (ARGV stays well under Lua's unpack limit).
-- RANGE_MERGE due times are formatted once per distinct timeRange: a Lua number handed to ZADD is converted to a
-- string on every call, which cost more than the ZADD itself (most calls carry one timeRange).
local members, zadd_args, seen, due_of = {}, {}, {}, {}
for i = 3, #ARGV, step do
    local member = ARGV[i + 1]
    members[#members + 1] = member
    local score = ARGV[i]
    if range then
        local due = due_of[score]
        if not due then
            due = string.format('%d', now + tonumber(score))
            due_of[score] = due
        end
        score = due
    end
    zadd_args[#zadd_args + 1] = score
    zadd_args[#zadd_args + 1] = member
end
local existing = redis.call('ZMSCORE', K_STORE, unpack(members))
if range then
    redis.call('ZADD', K_STORE, 'NX', unpack(zadd_args))
else
    redis.call('ZADD', K_STORE, unpack(zadd_args))
end
local added = {}
for j, member in ipairs(members) do
    if existing[j] or seen[member] then
        added[j] = '0'
    else
        added[j] = '1'
        seen[member] = true
    end
end

if with_envelopes then
    -- HSET with repeated fields keeps the last: the latest send's envelope within this call, too. A body's trace
    -- context alone goes into its compact trace record; a fuller envelope of a body deletes that record (it holds the
    -- context itself, and is read first).
    local envelope_args, trace_args, stale = {}, {}, {}
    for j, member in ipairs(members) do
        local envelope = ARGV[2 + 3 * j]
        if envelope ~= '' then
            if is_id(member) then
                envelope_args[#envelope_args + 1] = member
                envelope_args[#envelope_args + 1] = envelope
            else
                local key, trace, check = body_keys(member)
                if trace_only(envelope) then
                    trace_args[#trace_args + 1] = trace
                    trace_args[#trace_args + 1] = check .. envelope
                else
                    envelope_args[#envelope_args + 1] = key
                    envelope_args[#envelope_args + 1] = envelope
                    stale[#stale + 1] = trace
                end
            end
        end
    end
    if #envelope_args > 0 then
        redis.call('HSET', K_MSG, unpack(envelope_args))
    end
    if #trace_args > 0 then
        redis.call('HSET', K_TRACE, unpack(trace_args))
    end
    if #stale > 0 and redis.call('EXISTS', K_TRACE) == 1 then
        redis.call('HDEL', K_TRACE, unpack(stale))
    end
end

if is_priority then
    if was_empty then
        redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. now)
    end
else
    local first = redis.call('ZRANGE', K_STORE, 0, 0, 'WITHSCORES')
    if was_empty or first[1] ~= first_before[1] or first[2] ~= first_before[2] then
        redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. first[2])
    end
end
return table.concat(added)
