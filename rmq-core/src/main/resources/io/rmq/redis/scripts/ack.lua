-- Acknowledges deliveries: removes each member from prepare if, and only if, its prepare score still equals the
-- lease token the consumer holds (fencing: a consumer whose delivery ended cannot remove a later delivery of the body;
-- tokens are unique per delivery, see issue_lease in _common.lua).
-- A duplicate of the body waiting in store is untouched and will be delivered on its own: when pops skipped it while
-- this delivery was in flight (the slot's skipped SET exists), it is announced on the wake channel now (see
-- announce_waiting and forget_skipped); it keeps the envelope stored for the member (see forget_envelopes in
-- _common.lua). A message sent with a deduplication window starts it (see start_windows).
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..17]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe, lease-seq, skipped of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0; followed by a count n when the last n arguments are the envelope keys
--         of the members, one per member in argument order (0x01 + the first 13 bytes of the body's SHA-1; '' for an
--         id, or a body the consumer names none for; '\0' for a body it read and found nothing stored beside): the
--         consumer names the keys of the bodies that came with an envelope or a trace record, so that forgetting them
--         needs no digest here (see keys_of and forget_envelopes in _common.lua)
-- ARGV[2..]: runs of members that hold the same token (the deliveries of one pop share it; tokens in 1/1024 ms, as
--       pop.lua and extend.lua reply them): token1, count1, member, member, ..., token2, count2, member, ...
--       (one token per run instead of one per member: fewer arguments to convert, here and in the client)
-- Returns: a string with one digit per member, in argument order: 1 (acked) or 0 (fenced: lease no longer held)
--          (one reply element instead of one per member: cheaper to build here and to read in the client)
--#include _common.lua
write_when_full()

local is_priority = string.sub(ARGV[1], 1, 1) == '1'
local named_count = tonumber(string.sub(ARGV[1], 2)) or 0
local runs_end = #ARGV - named_count
-- The fencing check per run: the members of one pop (or extension) share its token, so one ZRANGEBYSCORE of that exact
-- score names the ones it still holds, with no score to format and parse per member as ZMSCORE would (Redis formats
-- each double it replies with printf, a large part of an ack's cost). When the token holds many more members than
-- this call acks (acks trickling in one by one), the run is checked with ZMSCORE instead, so an ack never reads back
-- much more than it settles; a ZCOUNT of the token (two rank lookups, no member read) decides which, so the run
-- never pays for both.
local out, acked = {}, {}
-- the envelope keys of the acked members (when the consumer named them), and how many members were read so far
local acked_keys, seen = named_count > 0 and {} or nil, 0
-- acked members still to be removed one by one (the runs that settle all their token holds go by score instead)
local remove = {}
local i = 2
while i <= runs_end do
    local token, count = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
    local first, last = i + 2, i + 1 + count
    local score = string.format('%.17g', token / TOKEN_UNITS)
    if redis.call('ZCOUNT', K_PREPARE, score, score) <= 2 * count + 16 then
        local held = redis.call('ZRANGEBYSCORE', K_PREPARE, score, score)
        local holds = {}
        for _, member in ipairs(held) do holds[member] = 1 end
        local run_start, settled = #acked + 1, 0
        for k = first, last do
            local member = ARGV[k]
            local held_here = holds[member]
            seen = seen + 1
            if held_here then
                if held_here == 1 then
                    holds[member] = 2 -- counted once, however often the run names it
                    settled = settled + 1
                end
                acked[#acked + 1] = member
                if acked_keys then acked_keys[#acked] = ARGV[runs_end + seen] end
                out[#out + 1] = '1'
            else
                out[#out + 1] = '0'
            end
        end
        if settled == #held then
            -- the run settles every member the token holds (the usual case: a pop's deliveries acked together):
            -- remove them by their score, without handing Redis each member again
            if settled > 0 then redis.call('ZREMRANGEBYSCORE', K_PREPARE, score, score) end
        else
            for j = run_start, #acked do remove[#remove + 1] = acked[j] end
        end
    else
        local current = redis.call('ZMSCORE', K_PREPARE, unpack(ARGV, first, last))
        for k = first, last do
            local held_score = current[k - first + 1]
            seen = seen + 1
            if held_score and token_of(held_score) == token then
                acked[#acked + 1] = ARGV[k]
                if acked_keys then acked_keys[#acked] = ARGV[runs_end + seen] end
                remove[#remove + 1] = ARGV[k]
                out[#out + 1] = '1'
            else
                out[#out + 1] = '0'
            end
        end
    end
    i = last + 1
end
if #remove > 0 then
    redis.call('ZREM', K_PREPARE, unpack(remove))
end
-- What else a slot may keep about a body (retries, failures, priorities, cancel marks, envelopes, trace records, legacy
-- contexts, skipped duplicates, deduplication windows): usually none of it, which one EXISTS of all nine keys tells
-- instead of one call each
-- (a failure's noted error exists only beside its attempt count, so the errors HASH needs no place in it)
if #acked > 0 and redis.call('EXISTS', K_RETRY, K_ATTEMPTS, K_PRIORITY, K_CANCELLED, K_CONTEXT, K_MSG, K_TRACE,
        K_SKIPPED, K_DEDUPE) > 0 then
    -- handled: the deduplication windows of messages sent with one start now, before their envelopes are forgotten
    start_windows(acked, acked_keys)
    -- A copy still backing off (PRIORITY retry) keeps its attempt count and priority.
    local forget = acked
    if redis.call('EXISTS', K_RETRY) == 1 then
        forget = {}
        local retrying = redis.call('ZMSCORE', K_RETRY, unpack(acked))
        for j, member in ipairs(acked) do
            if not retrying[j] then forget[#forget + 1] = member end
        end
    end
    -- most slots have no failures and no priorities to forget: skip the multi-member HDELs then
    if #forget > 0 and redis.call('EXISTS', K_ATTEMPTS) == 1 then
        redis.call('HDEL', K_ATTEMPTS, unpack(forget))
        -- a failure's noted error lives only while its attempt count does (see note_error in _common.lua)
        if redis.call('EXISTS', K_ERRORS) == 1 then
            redis.call('HDEL', K_ERRORS, unpack(forget))
        end
    end
    if #forget > 0 and redis.call('EXISTS', K_PRIORITY) == 1 then
        redis.call('HDEL', K_PRIORITY, unpack(forget))
    end
    -- a delivery cancelled while in flight is over: its mark goes with it
    if redis.call('EXISTS', K_CANCELLED) == 1 then
        redis.call('SREM', K_CANCELLED, unpack(acked))
    end
    -- its envelope too, unless a duplicate still waits (or a copy backs off or lies in dead)
    forget_envelopes(acked, acked_keys, true)
    -- duplicates waiting behind an in-flight body are rare: no store lookup unless a pop skipped one (then one per
    -- call, and the acked bodies leave the skipped SET)
    if forget_skipped(acked) then
        local waiting = redis.call('ZMSCORE', K_STORE, unpack(acked))
        local now = nil
        for j, member in ipairs(acked) do
            if waiting[j] then
                now = now or now_ms()
                announce_waiting(member, is_priority, now)
            end
        end
    end
end
return table.concat(out)
