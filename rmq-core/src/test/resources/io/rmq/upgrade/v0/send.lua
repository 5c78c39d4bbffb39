-- Single sends (grouped per slot by SlotBatcher; sendBatch, and a call of one message without a trace context, use a
-- native ZADD + a read of the slot's first message instead, see SendWrites.sendBatch / sendOne): writes
-- messages into one slot's store with the merge rule of the topic type, and wakes sleeping consumers when the slot's
-- first message changed (see wake_if_first in _common.lua; checked once per call, not per message).
--   RANGE_MERGE ('range'): due at Redis-now + timeRange, unless the body is already waiting: then it merges and keeps
--                          its original due time (ZADD NX).
--   PRIORITY / FIXED_TIME ('score'): score = priority or due time; a waiting duplicate takes the latest value.
-- Trace contexts (propagation on, modes 'range-ctx' / 'score-ctx' only; the plain modes never touch the context
-- HASH): a message's context follows the same rule as its time. RANGE_MERGE keeps the context of the send that
-- added the message (a merged send changes neither its due time nor its context); PRIORITY / FIXED_TIME take the
-- latest sender's. A send without a context ('') leaves whatever is stored.
--
-- KEYS[1..10]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context of the slot (store and context are written)
-- ARGV[1]: 'range' or 'score'; 'range-ctx' or 'score-ctx' when messages carry trace contexts
-- ARGV[2]: 1 if the topic is PRIORITY, else 0
-- ARGV[3..]: parameter1, member1, parameter2, member2, ...  (parameter = timeRange ms, priority or due ms)
--            with contexts: parameter1, member1, context1, parameter2, ...  (context: encoded, or '' for none)
-- Returns: a string with one digit per message: 1 (added) or 0 (merged into a waiting one, or repeated within this
--          call); one reply element instead of one per message
--#include _common.lua

local mode = ARGV[1]
local range = mode == 'range' or mode == 'range-ctx'
local with_contexts = mode == 'range-ctx' or mode == 'score-ctx'
local step = with_contexts and 3 or 2
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

if with_contexts then
    -- HSET with repeated fields keeps the last: the latest sender's context within this call, too
    local context_args = {}
    for j, member in ipairs(members) do
        local context = ARGV[2 + 3 * j]
        if context ~= '' and (not range or added[j] == '1') then
            context_args[#context_args + 1] = member
            context_args[#context_args + 1] = context
        end
    end
    if #context_args > 0 then
        redis.call('HSET', K_CONTEXT, unpack(context_args))
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
