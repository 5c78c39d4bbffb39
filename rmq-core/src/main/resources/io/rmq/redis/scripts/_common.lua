-- Shared helpers, pasted by the loader where a script says "--#include _common.lua".
-- Slot keys always come in this order (KEYS[1..15]):
--   store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace, errors, expiry,
--   dedupe (all under one hash tag {topic:slot})
-- The scripts that lease or settle CONCURRENT deliveries (pop, extend, ack, nack, release, sweep) get the slot's
-- lease-seq key as KEYS[16] and its skipped key as KEYS[17] (the others have neither: K_SKIPPED is nil there).
-- A member is a message's serialized body, or 0xFF followed by its id (a message sent with an id).

local K_STORE, K_PREPARE, K_DEAD, K_ATTEMPTS, K_DEAD_INFO, K_RETRY, K_PRIORITY, K_OWNER, K_CANCELLED, K_CONTEXT,
    K_MSG, K_TRACE, K_ERRORS, K_EXPIRY, K_DEDUPE, K_LEASE_SEQ, K_SKIPPED = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5],
    KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13], KEYS[14], KEYS[15], KEYS[16], KEYS[17]

-- Redis refuses a script's deny-oom writes (ZADD, HSET, SET, SADD, ...) over maxmemory only until the script has
-- written once: on 6.2 and 7 alike a script whose first write is not deny-oom (ZREM, HDEL, DEL) may go on writing
-- (Redis 7's `#!lua flags=allow-oom` does not exist on 6.2). A script that does not grow memory (it moves, settles or
-- removes messages, or rewrites small bounded state) calls this as its first statement: a ZREM of a member no slot
-- ZSET can hold (0xFF alone: an id is never empty) from its own prepare key (in the slot's hash tag), so it runs while
-- Redis is full and consumers drain it. Sends never call it: their first write is a ZADD or HSET, which a full Redis
-- refuses before anything is stored.
local function write_when_full()
    redis.call('ZREM', K_PREPARE, '\255')
end

-- "Now" always comes from Redis's clock, never from a client host.
local function now_ms()
    local t = redis.call('TIME')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Lease tokens (CONCURRENT slots). A delivery's prepare score is its lease deadline in ms plus a fraction k/1024
-- that makes the score its fencing token, unique by construction: every lease a slot issues (pop, extension) scores
-- above the last one it issued, which the slot's lease-seq key keeps. So two deliveries of one body never share a
-- token, not even when both start in one millisecond. Clients hold a token as the integer score * 1024: exact, since
-- k/1024 added to whole ms below 2^42 (the year 2109) is an exact double, and so is its product with 1024. A token
-- goes back into Redis only as string.format('%.17g') (Lua's own tostring keeps 14 digits and would drop the fraction).
local TOKEN_UNITS = 1024

-- The token, in 1/1024 ms, of a prepare score as ZSCORE gives it.
local function token_of(score)
    return tonumber(score) * TOKEN_UNITS
end

-- Issues this slot's next lease token (a prepare score): now + lease_ms, raised just above the last token issued when
-- that is not below it already (another lease of this slot started in the same millisecond, a consumer with a
-- longer lease popped before, or Redis's clock stepped back). The lease-seq key lives until just after the token's
-- deadline: once it has gone, now has passed every token the slot issued and now + lease is above them all again.
local function issue_lease(now, lease_ms)
    local token = now + lease_ms
    local last = tonumber(redis.call('GET', K_LEASE_SEQ) or '0')
    if last >= token then
        token = last + 1 / TOKEN_UNITS
    end
    redis.call('SET', K_LEASE_SEQ, string.format('%.17g', token), 'PXAT', string.format('%d', math.floor(token) + 1))
    return token
end

-- Consumers sleep until the earliest due time they know of and SUBSCRIBE to "<prefix>:wake". When a write makes
-- `member` the first message of this slot's store (something is due sooner than any sleeper planned for), tell
-- them: the message is "<store key>|<due ms>" (PRIORITY: due now). Under a backlog the new member is rarely first,
-- so busy topics publish almost nothing.
local WAKE_CHANNEL = string.match(K_STORE, '^(.*):{') .. ':wake'

local function wake_if_first(member, is_priority, now)
    if is_priority then
        if redis.call('ZCARD', K_STORE) == 1 then
            redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. now)
        end
    elseif redis.call('ZRANK', K_STORE, member) == 0 then
        redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. redis.call('ZSCORE', K_STORE, member))
    end
end

-- A body just left prepare while a duplicate of it waits in store (sent while it was in flight). Pops skipped that
-- duplicate and their next-due hints left it out, so sleepers would only find it at their next full poll (or at
-- the lease deadline): announce it now (PRIORITY: due now; time types: its due time).
local function announce_waiting(member, is_priority, now)
    if is_priority then
        redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. now)
    else
        redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. redis.call('ZSCORE', K_STORE, member))
    end
end

-- The skipped SET: bodies a pop found in flight (prepare) while a duplicate of theirs waited in store. The pop leaves
-- the duplicate there and its next-due hint leaves it out, so the delivery in flight must announce the duplicate when
-- it ends (announce_waiting). A duplicate no pop skipped is in every hint given since it was sent (or its send woke
-- the sleepers), so an ack has to look for waiting duplicates only while this SET exists: without it an ack spends
-- no store lookup at all. Every way out of prepare (ack, fail, release) takes its members out of the SET.
-- Returns whether the SET existed (only then can a waiting duplicate of `members` need announcing).
local function forget_skipped(members)
    if K_SKIPPED and redis.call('EXISTS', K_SKIPPED) == 1 then
        redis.call('SREM', K_SKIPPED, unpack(members))
        return true
    end
    return false
end

-- Puts a message that comes back (retry, release, requeue from dead) into store with `score`, merging with a
-- duplicate that is already waiting: PRIORITY keeps the waiting one's priority (it is newer, NX); time-ordered
-- topics keep the earlier of the two due times (LT). Then wakes sleepers if it became the slot's first message, or
-- if it merged with a waiting duplicate (which pops had skipped while this body was in flight).
local function return_to_store(member, score, is_priority, now)
    local waiting = redis.call('ZSCORE', K_STORE, member)
    if is_priority then
        redis.call('ZADD', K_STORE, 'NX', score, member)
    else
        redis.call('ZADD', K_STORE, 'LT', score, member)
    end
    if waiting then
        announce_waiting(member, is_priority, now)
    else
        wake_if_first(member, is_priority, now)
    end
end

-- A pseudo-random value in [0,1) per position, derived from one client-supplied random number (scripts must not
-- depend on Redis's own PRNG, which older versions seed identically on every call).
local function spread(rnd, i)
    local x = rnd + i * 0.6180339887498949
    return x - math.floor(x)
end

-- Delay before the next attempt after `failures` failures:
-- min(max, initial * multiplier^(failures-1)), shortened by up to `jitter` * delay using `rnd` in [0,1).
local function backoff_ms(failures, initial, multiplier, max, jitter, rnd)
    local delay = initial * (multiplier ^ (failures - 1))
    if delay > max then delay = max end
    return math.floor(delay * (1 - jitter * rnd))
end

-- Longest error text the errors HASH keeps per body (bytes): it is kept for every message waiting for a retry, so a
-- failure storm costs at most this much per message (dead-info, one per dead message, keeps the whole reason).
local ERROR_BYTES = 500

-- Keeps when and why `member`'s attempt failed ("now\nreason", the reason cut to ERROR_BYTES on a UTF-8 character
-- boundary) while it waits for its retry: for the retries view. Written by failures only; every path that forgets the
-- attempt count forgets it too (ack, bury, forget, cancel, purge, the ORDERLY settles).
local function note_error(member, now, reason)
    local text = reason or ''
    if #text > ERROR_BYTES then
        local cut = ERROR_BYTES
        -- never half a character: back off over continuation bytes (10xxxxxx) to the start of the cut one
        while cut > 0 and string.byte(text, cut + 1) >= 128 and string.byte(text, cut + 1) < 192 do
            cut = cut - 1
        end
        text = string.sub(text, 1, cut)
    end
    redis.call('HSET', K_ERRORS, member, now .. '\n' .. text)
end

-- Dead-letter retention of this slot, as the script's max-retries argument gives it (see max_retries_of): the most
-- members dead keeps (0: no bound) and the longest it keeps one, in ms (0: no bound). Applied by bury (trim_dead).
local DEAD_KEEP_COUNT, DEAD_KEEP_AGE = 0, 0
-- Dead members this script call trimmed (bury), for its reply.
local dead_trimmed = 0
local trim_dead -- defined below forget_envelopes, which it needs

-- Whether messages that expire before they are handled go to dead (reason 'expired ...') instead of being dropped:
-- the topic's choice, set by max_retries_of.
local EXPIRED_TO_DEAD = false

-- The max retries in a max-retries argument: "<max retries>" alone, or "<max retries> <most dead> <longest dead ms>",
-- which also sets the slot's dead-letter retention for this call's burials, optionally followed by " e": expired
-- messages go to dead.
local function max_retries_of(arg)
    local retries, count, age, expired = string.match(arg, '^(%d+) (%d+) (%d+)( ?e?)$')
    if not retries then
        return tonumber(arg)
    end
    DEAD_KEEP_COUNT, DEAD_KEEP_AGE = tonumber(count), tonumber(age)
    EXPIRED_TO_DEAD = expired == ' e'
    return tonumber(retries)
end

-- Moves `member` (already out of prepare) into dead with what dead-info keeps, and forgets its attempt count (and
-- its noted error: dead-info holds the reason now) and its expiry unless a duplicate still waits in store (a dead
-- message does not expire: a requeue delivers it, and a new send of it starts without one). Then trims dead to its
-- retention.
local function bury(member, now, failures, priority, reason)
    redis.call('HDEL', K_ATTEMPTS, member)
    redis.call('HDEL', K_ERRORS, member)
    if K_EXPIRY and redis.call('EXISTS', K_EXPIRY) == 1 and not redis.call('ZSCORE', K_STORE, member) then
        redis.call('ZREM', K_EXPIRY, member)
    end
    redis.call('HSET', K_DEAD_INFO, member, failures .. '\n' .. priority .. '\n' .. reason)
    redis.call('ZADD', K_DEAD, now, member)
    trim_dead(now)
end

-- Up to `want` due members of store WITHSCORES in taking order, after the first `skipped` (bodies found in flight):
-- time types score <= now, oldest first; PRIORITY highest first.
local function due_page(is_priority, now, skipped, want)
    if is_priority then
        return redis.call('ZREVRANGE', K_STORE, skipped, skipped + want - 1, 'WITHSCORES')
    end
    return redis.call('ZRANGEBYSCORE', K_STORE, '-inf', now, 'WITHSCORES', 'LIMIT', skipped, want)
end

-- True (and the mark removed) when `member`, which is leaving prepare, was cancelled while in flight (cancel.lua):
-- its delivery is over and it must not be handed out again.
local function take_cancel_mark(member)
    return redis.call('EXISTS', K_CANCELLED) == 1 and redis.call('SREM', K_CANCELLED, member) == 1
end

-- Envelopes: what a message carries besides its member (the payload of an id message, its headers, the sender's
-- trace context), in the msg HASH. One field serves every copy of the member (store, prepare, retry, dead), the way
-- one attempts field does; the latest send replaces it. Fields (EnvelopeKeys computes the same in Java):
--   an id member: the member itself (short);
--   a body: 0x01 followed by the first 13 bytes of its SHA-1 (a header costs no second copy of the body; 104 bits:
--     no collision to fear in one slot);
-- A body whose envelope is its trace context alone (the common case with propagation on; envelope = flags 2 and the
-- 25-byte traceparent) has a compact trace record in the trace HASH instead: field 0x02 + SHA-1 bytes 1..5, value =
-- SHA-1 bytes 6..9 (a check) followed by the envelope. 6 and 30 bytes fit Redis's smallest allocations. Two bodies of
-- one slot may share a field (40 bits): then one overwrites or deletes the other's record, and the check makes the
-- other read none: a collision can lose a trace link, never attach a wrong one. Read only when the body has no 0x01
-- field (an envelope with headers wins). A HASH of its own, so that a pop of a slot whose envelopes are all trace
-- records looks nothing up in Lua: the consumer reads the records itself (Java's SHA-1, a native HMGET) and names
-- them in its ack, where a digest per message in Lua costs more than the rest of a pop and ack together.

local function is_id(member)
    return string.byte(member, 1) == 255
end

-- A body's envelope key alone (0x01 + SHA-1 bytes 0..12), as a sender or consumer computed it, gives the other two
-- names: the trace-record field is 0x02 + bytes 0..4, its check bytes 5..8 of the digest
local function keys_of(key)
    return key, '\2' .. string.sub(key, 2, 6), string.sub(key, 7, 10)
end

-- The 0x01 field, the trace-record field and its check of a body, from one SHA-1, paid per message by pops (and by
-- acks and sends that were not told the key) of slots with envelopes. The digest's first 13 bytes come from four hex
-- numbers: ~1.2 µs, where string.gsub over the pairs cost ~2.7 µs and a 256-entry look-up table ~49 µs to build
-- (whatever a script's top level builds, every call of every script pays for, envelopes or not).
local function body_keys(member)
    local hex, sub, floor = redis.sha1hex(member), string.sub, math.floor
    local a, b, c = tonumber(sub(hex, 1, 8), 16), tonumber(sub(hex, 9, 16), 16), tonumber(sub(hex, 17, 24), 16)
    return keys_of(string.char(1, floor(a / 16777216), floor(a / 65536) % 256, floor(a / 256) % 256, a % 256,
        floor(b / 16777216), floor(b / 65536) % 256, floor(b / 256) % 256, b % 256,
        floor(c / 16777216), floor(c / 65536) % 256, floor(c / 256) % 256, c % 256, tonumber(sub(hex, 25, 26), 16)))
end

local function envelope_key(member)
    if is_id(member) then
        return member
    end
    return (body_keys(member))
end

-- Whether an envelope is a trace context alone (flags 2, the 25-byte traceparent): stored as a compact trace record.
local function trace_only(envelope)
    return #envelope == 26 and string.byte(envelope, 1) == 2
end

-- Deduplication windows (send.lua's '/<ms>' fields): the dedupe ZSET holds, per identity (an id's member, or a body's
-- envelope key: 14 bytes however long the body), minus the window in ms while a message sent with one is in the slot,
-- and the Redis ms its window ends once such a message was handled (start_windows). A send with a window whose
-- identity's window has not ended is dropped (send.lua). Pending entries keep the key persistent; once none is left,
-- the key expires with its last window, so a quiet topic leaves nothing behind.
local function identity_of(member, named)
    if is_id(member) then
        return member
    end
    if named and #named == 14 then -- a body's key ('' unknown, '\0' nothing stored beside it: digested here)
        return named
    end
    return (body_keys(member))
end

-- The windows of `members`, just handled (acked), start now: each identity whose message was sent with a window (a
-- negative entry) holds it until now + window. Windows that ended are trimmed. `named` (optional, indexed like
-- members): the bodies' envelope keys as the consumer computed them. Slots without windows pay one EXISTS.
local function start_windows(members, named)
    if #members == 0 or redis.call('EXISTS', K_DEDUPE) == 0 then
        return
    end
    local now = now_ms()
    local ids = {}
    for j, member in ipairs(members) do
        ids[j] = identity_of(member, named and named[j])
    end
    local scores = redis.call('ZMSCORE', K_DEDUPE, unpack(ids))
    local args = {}
    for j = 1, #ids do
        local score = scores[j] and tonumber(scores[j])
        if score and score < 0 then
            args[#args + 1] = string.format('%d', now - score)
            args[#args + 1] = ids[j]
        end
    end
    redis.call('ZREMRANGEBYSCORE', K_DEDUPE, 0, now)
    if #args > 0 then
        redis.call('ZADD', K_DEDUPE, unpack(args))
        if redis.call('ZCOUNT', K_DEDUPE, '-inf', '(0') == 0 then
            local last = redis.call('ZRANGE', K_DEDUPE, -1, -1, 'WITHSCORES')
            redis.call('PEXPIREAT', K_DEDUPE, last[2])
        end
    end
end

-- The pending windows of `members`, whose last copy left the slot unhandled (dropped, cancelled, purged, deleted from
-- dead): their entries go; a window that started stays until it ends. `keys` (indexed like members; nil or '' where
-- unknown): the bodies' envelope keys the caller has already, so that no body is digested twice.
local function forget_windows(members, keys)
    local ids = {}
    for j, member in ipairs(members) do
        ids[j] = identity_of(member, keys[j])
    end
    local scores = redis.call('ZMSCORE', K_DEDUPE, unpack(ids))
    local pending = {}
    for j = 1, #ids do
        if scores[j] and tonumber(scores[j]) < 0 then
            pending[#pending + 1] = ids[j]
        end
    end
    if #pending > 0 then
        redis.call('ZREM', K_DEDUPE, unpack(pending))
    end
end

-- Which of `members` have a copy in the sorted set `key` (a table indexed like members; empty when the key is absent:
-- an EXISTS is cheaper than a reply of nils).
local function copies_in(key, members)
    if redis.call('EXISTS', key) == 0 then
        return {}
    end
    return redis.call('ZMSCORE', key, unpack(members))
end

-- A script that took `members` out of store, prepare, retry or dead calls this afterwards: the envelope goes when no
-- copy is left (acked, dropped, cancelled, purged, deleted from dead), and stays while a newer duplicate waits in
-- store, a PRIORITY retry backs off or the member lies in dead (a requeue is delivered with its headers). The same for
-- a trace record and a legacy trace context (the context HASH that engines before envelopes wrote, keyed by the body).
-- `named` (optional, indexed like members): the bodies' envelope keys as the consumer computed them ('' for an id or
-- a body it named none for), so that no digest is needed here (see keys_of), or '\0' for a body the consumer read and
-- found nothing stored beside (no envelope, no trace record): a send that stores one later also puts a copy of the
-- body in store, which keeps it, so such a body has only an expiry entry or a legacy context to forget;
-- `left_prepare`: the caller has just taken every one of them out of prepare because they were handled (an ack), which
-- saves looking there, and their pending deduplication windows were started already (start_windows): only the other
-- callers forget pending windows. Slots with none of these keys pay one EXISTS.
local function forget_envelopes(members, named, left_prepare)
    -- an ack's members have no pending window left to forget: it does not look at the dedupe key at all
    local windows_key = left_prepare and K_EXPIRY or K_DEDUPE
    if #members == 0 or redis.call('EXISTS', K_MSG, K_TRACE, K_CONTEXT, K_EXPIRY, windows_key) == 0 then
        return
    end
    local has_msg, has_trace = redis.call('EXISTS', K_MSG) == 1, redis.call('EXISTS', K_TRACE) == 1
    local has_legacy = redis.call('EXISTS', K_CONTEXT) == 1
    local has_expiry = redis.call('EXISTS', K_EXPIRY) == 1
    local has_dedupe = not left_prepare and redis.call('EXISTS', K_DEDUPE) == 1
    if named and not (has_legacy or has_expiry or has_dedupe) then
        -- the bodies with nothing stored beside them need no look-up at all (with propagation on at a low sampling
        -- rate, most of a slot's bodies: its trace HASH exists for the few sampled ones)
        local some, some_named = {}, {}
        for j, member in ipairs(members) do
            if named[j] ~= '\0' then
                some[#some + 1] = member
                some_named[#some] = named[j]
            end
        end
        if #some == 0 then
            return
        end
        members, named = some, some_named
    end
    local in_store, in_prepare = copies_in(K_STORE, members), left_prepare and {} or copies_in(K_PREPARE, members)
    local in_retry, in_dead = copies_in(K_RETRY, members), copies_in(K_DEAD, members)
    -- gone_keys: the envelope keys of the gone bodies where known (named, or digested here), for forget_windows
    local gone, gone_keys, fields, trace_fields = {}, {}, {}, {}
    for j, member in ipairs(members) do
        if not (in_store[j] or in_prepare[j] or in_retry[j] or in_dead[j]) then
            gone[#gone + 1] = member
            local key = named and named[j]
            if is_id(member) then
                fields[#fields + 1] = member
            elseif key == '\0' then
                key = nil -- nothing stored beside it (see above): only its expiry entry or legacy context goes
            elseif has_msg or has_trace then
                local trace
                if key and key ~= '' then
                    key, trace = keys_of(key)
                else
                    key, trace = body_keys(member)
                end
                fields[#fields + 1] = key
                trace_fields[#trace_fields + 1] = trace
            end
            gone_keys[#gone] = key
        end
    end
    if has_msg and #fields > 0 then
        redis.call('HDEL', K_MSG, unpack(fields))
    end
    if has_trace and #trace_fields > 0 then
        redis.call('HDEL', K_TRACE, unpack(trace_fields))
    end
    if has_legacy and #gone > 0 then
        redis.call('HDEL', K_CONTEXT, unpack(gone))
    end
    if has_expiry and #gone > 0 then
        redis.call('ZREM', K_EXPIRY, unpack(gone))
    end
    if has_dedupe and #gone > 0 then
        forget_windows(gone, gone_keys)
    end
end

-- The envelopes of `members` ('' where none), or nil when the slot has none. Envelopes are always looked up when the
-- msg HASH exists (an id message's payload is in it): the 0x01 fields (ids: the member), then the trace records of
-- the bodies that had none (unless `skip_trace`: the caller reads them itself), each kept only when its check
-- matches. Legacy trace contexts (the context HASH: text, which starts with a printable character where an envelope
-- starts with its flags byte) only when `with_legacy` (propagation on), for bodies with neither.
local function envelopes_of(members, with_legacy, skip_trace)
    if #members == 0 then
        return nil
    end
    local has_msg = redis.call('EXISTS', K_MSG) == 1
    local has_trace = not skip_trace and redis.call('EXISTS', K_TRACE) == 1
    local has_legacy = with_legacy and redis.call('EXISTS', K_CONTEXT) == 1
    if not (has_msg or has_trace or has_legacy) then
        return nil
    end
    local out = {}
    for j = 1, #members do
        out[j] = ''
    end
    if has_msg or has_trace then
        local keys, traces, checks = {}, {}, {}
        for j, member in ipairs(members) do
            if is_id(member) then
                keys[j] = member
            else
                keys[j], traces[j], checks[j] = body_keys(member)
            end
        end
        local found = has_msg and redis.call('HMGET', K_MSG, unpack(keys)) or {}
        local missing, at = {}, {}
        for j = 1, #members do
            if found[j] then
                out[j] = found[j]
            elseif traces[j] then
                missing[#missing + 1] = traces[j]
                at[#at + 1] = j
            end
        end
        if has_trace and #missing > 0 then
            local records = redis.call('HMGET', K_TRACE, unpack(missing))
            for i, j in ipairs(at) do
                local record = records[i]
                if record and string.sub(record, 1, 4) == checks[j] then
                    out[j] = string.sub(record, 5)
                end
            end
        end
    end
    if has_legacy then
        local missing, at = {}, {}
        for j, member in ipairs(members) do
            if out[j] == '' and not is_id(member) then
                missing[#missing + 1] = member
                at[#at + 1] = j
            end
        end
        if #missing > 0 then
            local found = redis.call('HMGET', K_CONTEXT, unpack(missing))
            for i, j in ipairs(at) do
                out[j] = found[i] or ''
            end
        end
    end
    return out
end

-- Deletes `members` from dead with what they keep there (dead-info; their envelopes unless a copy of the body still
-- waits, backs off or is in flight: forget_envelopes). An operator's delete (dead_delete.lua) and the retention's
-- trim (trim_dead) both go through here. Returns how many were in dead.
local function delete_dead(members)
    local deleted, gone = 0, {}
    for _, member in ipairs(members) do
        if redis.call('ZREM', K_DEAD, member) == 1 then
            redis.call('HDEL', K_DEAD_INFO, member)
            deleted = deleted + 1
            gone[deleted] = member
        end
    end
    forget_envelopes(gone)
    return deleted
end

-- Most members one burial trims: the one it added and older ones left over (a queue above its bounds after an
-- upgrade, a bound lowered, many burials in one call), so a script's trim work stays within 10 x its burials.
local TRIM_PER_BURIAL = 10

-- Trims dead to its retention, oldest first (lowest score: the time it died): members that died before now - the
-- longest age, then the oldest beyond the most count; at most TRIM_PER_BURIAL.
trim_dead = function(now)
    if DEAD_KEEP_COUNT == 0 and DEAD_KEEP_AGE == 0 then
        return
    end
    local want = 0
    if DEAD_KEEP_AGE > 0 then
        want = #redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', '(' .. (now - DEAD_KEEP_AGE), 'LIMIT', 0, TRIM_PER_BURIAL)
    end
    if DEAD_KEEP_COUNT > 0 and want < TRIM_PER_BURIAL then
        want = math.max(want, redis.call('ZCARD', K_DEAD) - DEAD_KEEP_COUNT)
    end
    if want > 0 then
        local oldest = redis.call('ZRANGE', K_DEAD, 0, math.min(want, TRIM_PER_BURIAL) - 1)
        dead_trimmed = dead_trimmed + delete_dead(oldest)
    end
end

-- Forgets what a slot keeps about a body that leaves for good (dropped): its attempt count, unless a copy still
-- backs off in the retry ZSET its priority, and unless a copy is left anywhere its envelope.
local function forget(member)
    redis.call('HDEL', K_ATTEMPTS, member)
    redis.call('HDEL', K_ERRORS, member)
    if not redis.call('ZSCORE', K_RETRY, member) then
        redis.call('HDEL', K_PRIORITY, member)
    end
    forget_envelopes({ member })
end

-- Records one failed attempt of `member` and decides what follows by `action` (the consumer's error handling
-- decision):
--   '' (or nil): the retry policy: retry after its backoff or, past max_retries, dead;
--   'd': dead at once (unreadable body, non-retryable error);  'x': dropped (the application said so);
--   a number: retry after that many ms, whatever max_retries says.
-- A body cancelled while in flight is dropped whatever the action. The backoff after n failures is
-- backoff_ms(n, initial, multiplier, max, jitter, rnd). Where the member leaves to or waits is the consume mode's:
-- `mode` is CONCURRENT_FAILURE (below) or ORDERLY_FAILURE (_orderly.lua), with
--   mode.drop(member, is_priority, now): it leaves for good;
--   mode.leave(member, is_priority): it leaves its place on its way to dead; returns the priority dead-info keeps
--     ('' for time types);
--   mode.wait(member, is_priority, now, due): it waits for its retry at `due`.
-- Returns 1 (retry scheduled), 2 (dead) or 3 (dropped).
local function fail(member, now, is_priority, max_retries, initial, multiplier, max, jitter, rnd, reason, action, mode)
    -- its delivery is over; a waiting duplicate is announced below where it stays due (CONCURRENT only: ORDERLY
    -- scripts have no skipped key)
    forget_skipped({ member })
    if action == 'x' or take_cancel_mark(member) then
        mode.drop(member, is_priority, now)
        return 3
    end
    local failures = redis.call('HINCRBY', K_ATTEMPTS, member, 1)
    local delay = tonumber(action or '')
    if action == 'd' or (not delay and failures > max_retries) then
        bury(member, now, failures, mode.leave(member, is_priority), reason)
        return 2
    end
    local due = now + (delay or backoff_ms(failures, initial, multiplier, max, jitter, rnd))
    note_error(member, now, reason)
    mode.wait(member, is_priority, now, due)
    return 1
end

-- fail()'s mode for a CONCURRENT delivery, which the caller has already taken out of prepare. PRIORITY messages wait
-- out their backoff in the retry ZSET and return with their priority (kept in the priority HASH); time-ordered
-- messages go straight back to store with score = due time (ZADD LT: if a newer duplicate is already waiting, the
-- earlier of the two times wins and the two merge).
local CONCURRENT_FAILURE = {
    drop = function(member, is_priority, now)
        forget(member)
        if redis.call('ZSCORE', K_STORE, member) then
            announce_waiting(member, is_priority, now) -- a duplicate sent meanwhile is due on its own
        end
    end,
    leave = function(member, is_priority)
        if not is_priority then
            return ''
        end
        local priority = redis.call('HGET', K_PRIORITY, member) or ''
        if not redis.call('ZSCORE', K_RETRY, member) then
            redis.call('HDEL', K_PRIORITY, member)
        end
        return priority
    end,
    wait = function(member, is_priority, now, due)
        if not is_priority then
            return_to_store(member, due, false, now)
            return
        end
        if redis.call('ZSCORE', K_STORE, member) then
            -- a duplicate sent while this body was in flight waits in store and can be popped now
            announce_waiting(member, true, now)
        end
        redis.call('ZADD', K_RETRY, due, member)
        -- the retry comes back through pop; wake sleepers when it is the first retry due
        local first = redis.call('ZRANGE', K_RETRY, 0, 0)
        if first[1] == member and redis.call('ZCARD', K_STORE) == 0 then
            redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. due)
        end
    end,
}

-- The reason dead-info keeps for a message that expired at `expires` (Redis ms) and was moved to dead.
local function expired_reason(expires)
    return 'expired at ' .. string.format('%d', expires) .. ' (Redis ms) before it was handled'
end

-- Expiry: a message sent with an expiry (send.lua) has its expires-at (Redis ms) in the expiry ZSET while a copy of
-- it is in the slot; forget_envelopes drops the entry with the last copy. It is never handed out once expired: pops
-- and ORDERLY steps call this first, and check what they hand out again (pop.lua passes over an expired member of a
-- page; orderly_next.lua drops one as it would hand it out).
-- Takes out of store (and the retry ZSET) up to `limit` messages that expired by `now`, or that expire by `until_ms`
-- at or before their due time (time types: a message taken ahead by a look-ahead would be handed over at its due
-- time); drops them, or with EXPIRED_TO_DEAD buries them with the reason. A copy in prepare is left alone (its
-- delivery is under way and settles itself; only a waiting duplicate of it goes), and an entry without any copy in
-- store, retry or prepare (left by an older engine's ack) is removed. Returns dropped, dead.
local function expire_waiting(now, until_ms, is_priority, limit)
    local due = redis.call('ZRANGEBYSCORE', K_EXPIRY, '-inf', until_ms, 'WITHSCORES', 'LIMIT', 0, limit)
    if #due == 0 then
        return 0, 0
    end
    local members = {}
    for i = 1, #due, 2 do members[#members + 1] = due[i] end
    local in_store = copies_in(K_STORE, members)
    local in_retry, in_prepare = copies_in(K_RETRY, members), copies_in(K_PREPARE, members)
    local dropped, dead, stale = 0, 0, {}
    for j, member in ipairs(members) do
        local expires = tonumber(due[2 * j])
        local score = in_store[j] and tonumber(in_store[j])
        if expires <= now or (score and not is_priority and score >= expires) then
            local backing_off = in_retry[j] and not in_prepare[j]
            if score or backing_off then
                if score then redis.call('ZREM', K_STORE, member) end
                if backing_off then redis.call('ZREM', K_RETRY, member) end
                if in_prepare[j] then
                    dropped = dropped + 1 -- the waiting duplicate of a delivery under way
                elseif EXPIRED_TO_DEAD then
                    local priority = ''
                    if is_priority then
                        priority = score and in_store[j] or redis.call('HGET', K_PRIORITY, member) or ''
                        redis.call('HDEL', K_PRIORITY, member)
                    end
                    bury(member, now, redis.call('HGET', K_ATTEMPTS, member) or 0, priority, expired_reason(expires))
                    dead = dead + 1
                else
                    forget(member)
                    dropped = dropped + 1
                end
            elseif not in_prepare[j] then
                stale[#stale + 1] = member
            end
        end
    end
    if #stale > 0 then
        redis.call('ZREM', K_EXPIRY, unpack(stale))
    end
    return dropped, dead
end

-- Lease-expiry sweep of this slot: every prepare entry whose deadline has passed counts as a failed attempt and is
-- retried after its backoff, or moved to dead past max retries. Returns retried, dead.
local function sweep_expired(now, limit, is_priority, max_retries, initial, multiplier, max, jitter, rnd)
    if redis.call('EXISTS', K_OWNER) == 1 then
        -- an ORDERLY slot: its prepare holds messages in order, not leases (see _orderly.lua); never sweep them
        return 0, 0
    end
    local expired = redis.call('ZRANGEBYSCORE', K_PREPARE, '-inf', '(' .. now, 'LIMIT', 0, limit)
    local retried, dead = 0, 0
    for i, member in ipairs(expired) do
        redis.call('ZREM', K_PREPARE, member)
        if fail(member, now, is_priority, max_retries, initial, multiplier, max, jitter, spread(rnd, i),
                'lease expired (consumer died, stalled or lost its connection)', '', CONCURRENT_FAILURE) == 2 then
            dead = dead + 1
        else
            retried = retried + 1 -- (or dropped: cancelled while in flight)
        end
    end
    return retried, dead
end

