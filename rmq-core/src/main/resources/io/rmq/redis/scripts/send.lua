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
-- trace HASH, in the same call as the member, and the latest send's envelope wins whole for every type, its trace
-- context included (a merged send without one leaves none: the delivered payload is that send's): a merged send
-- changes the due time by its type's rule but always delivers the newest payload, headers and context. A send without
-- an envelope ('') leaves whatever is stored. (A batch's chunk of id messages alone is written by a native MULTI /
-- HSET / ZADD / EXEC on a standalone connection instead, with the same rules: see SendWrites.)
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot (store, msg and trace are written)
-- Expiry (any mode followed by ':x'): the messages' expiry instants go into the expiry ZSET (member -> Redis ms, see
-- expire_waiting in _common.lua) after the store write; the latest send with an expiry sets it, a send without one
-- leaves what is stored (as with envelopes). A message whose instant is not after Redis's now is refused with
-- nothing of it written: in the digit modes alone (its digit is 'E'; the call's other sends, coalesced single sends
-- of other callers, go on), in the count modes (one batch's chunk) with the whole call.
-- Deduplication windows (':x' too): a message sent with a window whose identity (see identity_of in _common.lua) is in
-- a window that has not ended (a message of that identity was handled within it) is dropped, nothing of it written
-- (digit 'D'; not counted in the count modes); otherwise its window is kept pending in the dedupe ZSET until the message
-- is handled (see start_windows). A send without a window is never dropped.
-- ARGV[1]: 'range' or 'score'; 'range-env' or 'score-env' when messages carry envelopes; 'range-env-count' or
--          'score-env-count' for a batch's chunk with envelopes, whose sender needs only how many were new
--          ('range-count' / 'score-count': such a chunk without envelopes, whose messages carry expiries or
--          windows); each followed by ':x' when messages carry expiries or windows
-- ARGV[2]: 1 if the topic is PRIORITY, else 0
-- with ':x', ARGV[3]: one field per message, comma-separated: its expiry ('' none, '=<ms>' at that Redis time, '+<ms>'
--          that long after Redis's now), then '/<ms>' when it has a deduplication window; the arguments below then
--          start one later
-- ARGV[3..]: parameter1, member1, parameter2, member2, ...  (parameter = timeRange ms, priority or due ms)
--            with envelopes: parameter1, member1, envelope1, key1, parameter2, ... (envelope: encoded, or '' for none;
--            key: a body's envelope key as the sender computed it, see keys_of in _common.lua, or '' for an id or a
--            body without an envelope)
-- Returns: a string with one digit per message: 1 (added) or 0 (merged into a waiting one, or repeated within this
--          call), 'E' (refused: expired already) or 'D' (dropped: deduplicated); one reply element instead of one per
--          message. The count modes: the number of messages added, plus 2^20 x the number dropped by a window (an
--          integer), without looking up which were waiting
--#include _common.lua

local mode = ARGV[1]
local extended = string.sub(mode, -2) == ':x'
if extended then
    mode = string.sub(mode, 1, -3)
end
local count_only = mode == 'range-env-count' or mode == 'score-env-count' or mode == 'range-count'
    or mode == 'score-count'
local range = mode == 'range' or mode == 'range-env' or mode == 'range-env-count' or mode == 'range-count'
local with_envelopes = mode == 'range-env' or mode == 'score-env' or mode == 'range-env-count'
    or mode == 'score-env-count'
local step = with_envelopes and 4 or 2
local first_arg = 3 + (extended and 1 or 0)
local is_priority = ARGV[2] == '1'
local now = now_ms()

-- per message (by place among the call's messages): its expiry instant (Redis ms, formatted) and its deduplication
-- window (ms, as sent), both checked before anything is written; `refused`: the messages (digit modes) left out of
-- every write, each with its digit: 'E' it expired already, 'D' its identity's deduplication window has not ended
local expiries, windows, refused = nil, nil, nil
if extended then
    expiries, windows = {}, {}
    -- parsed once per distinct field: a batch's messages usually share one (number formatting is what costs)
    local parsed = {}
    local j = 0
    for field in string.gmatch(ARGV[3] .. ',', '([^,]*),') do
        j = j + 1
        if field ~= '' then
            local known = parsed[field]
            if not known then
                local expiry_field, window = string.match(field, '^([^/]*)/?(.*)$')
                local expiry, expired = false, false
                if expiry_field ~= '' then
                    local ms = tonumber(string.sub(expiry_field, 2))
                    local at = string.sub(expiry_field, 1, 1) == '+' and now + ms or ms
                    if at > now then
                        expiry = string.format('%d', at)
                    elseif count_only then
                        return redis.error_reply('RMQ_EXPIRED message ' .. j .. ' of the call expires at '
                            .. string.format('%d', at) .. ', not after Redis\'s clock (' .. now
                            .. ' ms): nothing was written')
                    else
                        expired = true
                    end
                end
                known = { expiry, window ~= '' and window or false, expired }
                parsed[field] = known
            end
            expiries[j], windows[j] = known[1], known[2]
            if known[3] then
                refused = refused or {}
                refused[j] = 'E'
            end
        end
    end
end
-- each windowed message's identity (see identity_of in _common.lua); a window that has not ended drops the send
local identities = nil
if windows and next(windows) then
    identities = {}
    local asked, places = {}, {}
    for place, window in pairs(windows) do
        if window and not (refused and refused[place]) then
            local i = first_arg + step * (place - 1)
            local key = with_envelopes and ARGV[i + 3] or nil
            identities[place] = identity_of(ARGV[i + 1], key)
            asked[#asked + 1] = identities[place]
            places[#places + 1] = place
        end
    end
    if #asked > 0 and redis.call('EXISTS', K_DEDUPE) == 1 then
        local ends = redis.call('ZMSCORE', K_DEDUPE, unpack(asked))
        for k, place in ipairs(places) do
            if ends[k] and tonumber(ends[k]) > now then
                refused = refused or {}
                refused[place] = 'D'
            end
        end
    end
end
-- a written message's place among the call's messages (only when some were refused)
local index = nil
local function at(j)
    return index and index[j] or j
end

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
-- the reply's digits by place among the call's messages ('E' for the refused ones), when some were refused
local digits = refused and {} or nil
for i = first_arg, #ARGV, step do
    local place = (i - first_arg) / step + 1
    if refused and refused[place] then
        if digits then digits[place] = refused[place] end
    else
        local member = ARGV[i + 1]
        members[#members + 1] = member
        if refused then
            index = index or {}
            index[#members] = place
        end
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
end
if #members == 0 then
    if count_only then -- every message was dropped by a window: nothing written
        return 1048576 * (#ARGV - first_arg + 1) / step
    end
    return table.concat(digits) -- every message was refused: nothing written
end
-- the count modes ask only how many are new: ZADD's reply says it (duplicates within the call counted once)
local existing = not count_only and redis.call('ZMSCORE', K_STORE, unpack(members))
local new_count
if range then
    new_count = redis.call('ZADD', K_STORE, 'NX', unpack(zadd_args))
else
    new_count = redis.call('ZADD', K_STORE, unpack(zadd_args))
end
local added = {}
if existing then
    for j, member in ipairs(members) do
        if existing[j] or seen[member] then
            added[j] = '0'
        else
            added[j] = '1'
            seen[member] = true
        end
    end
end

if with_envelopes then
    -- HSET with repeated fields keeps the last: the latest send's envelope within this call, too. A body's trace
    -- context alone goes into its compact trace record; a fuller envelope of a body deletes that record (the envelope
    -- is read first, and a record left beside it would outlive a context the latest send no longer carries).
    local envelope_args, trace_args, stale = {}, {}, {}
    for j, member in ipairs(members) do
        local envelope = ARGV[first_arg - 2 + 4 * at(j)]
        if envelope ~= '' then
            if is_id(member) then
                envelope_args[#envelope_args + 1] = member
                envelope_args[#envelope_args + 1] = envelope
            else
                local key = ARGV[first_arg - 1 + 4 * at(j)]
                local field, trace, check
                if key ~= '' then
                    field, trace, check = keys_of(key)
                else
                    field, trace, check = body_keys(member)
                end
                if trace_only(envelope) then
                    trace_args[#trace_args + 1] = trace
                    trace_args[#trace_args + 1] = check .. envelope
                else
                    envelope_args[#envelope_args + 1] = field
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

if expiries then
    local expiry_args = {}
    for j, member in ipairs(members) do
        local expiry = expiries[at(j)]
        if expiry then
            expiry_args[#expiry_args + 1] = expiry
            expiry_args[#expiry_args + 1] = member
        end
    end
    if #expiry_args > 0 then
        redis.call('ZADD', K_EXPIRY, unpack(expiry_args))
    end
end

if identities then
    -- pending windows (minus the window): they start when the message is handled (see start_windows); the latest send
    -- with a window sets it. The key stays while one is pending.
    local window_args = {}
    for j = 1, #members do
        local window = windows[at(j)]
        if window then
            window_args[#window_args + 1] = '-' .. window
            window_args[#window_args + 1] = identities[at(j)]
        end
    end
    if #window_args > 0 then
        redis.call('ZADD', K_DEDUPE, unpack(window_args))
        redis.call('PERSIST', K_DEDUPE)
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
if count_only then
    -- the messages a window dropped, counted above the added ones (a call carries at most 1000 messages)
    local deduplicated = 0
    for _, digit in pairs(refused or {}) do
        if digit == 'D' then deduplicated = deduplicated + 1 end
    end
    return new_count + 1048576 * deduplicated
end
if digits then
    for j = 1, #members do
        digits[index[j]] = added[j]
    end
    return table.concat(digits)
end
return table.concat(added)
