-- Two-phase pop (CONCURRENT mode; an ORDERLY slot, one with an owner key, is refused): first sweeps the slot's expired leases (as sweep.lua), then moves up to `batch` due messages of one slot from store to prepare, leased until now + lease.
-- Their prepare score is one new lease token (see issue_lease in _common.lua): the deadline, raised above every token
-- the slot issued before, so that it is unique to this pop; a pop that finds nothing due issues none (one whose due
-- bodies were all in flight has used one up unseen: harmless, tokens only need to be unique and increasing).
-- Time-ordered topics take score <= now, oldest first; PRIORITY takes the highest scores first, after first
-- bringing back retries whose backoff has ended (with their priority).
-- A body that is already in prepare (a duplicate sent while that body is in flight) is skipped and stays in
-- store until the in-flight delivery ends: one prepare entry per body keeps the lease token unambiguous. The body is
-- noted in the skipped SET, so that the end of the delivery in flight announces the duplicate (see forget_skipped in
-- _common.lua).
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..17]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe, lease-seq, skipped of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: batch, the most messages to take
-- ARGV[3]: lease in ms
-- ARGV[4]: max retries, with the dead-letter retention (see max_retries_of); ARGV[5..8]: backoff initial ms, multiplier, max ms, jitter; ARGV[9]: random in [0,1)
-- ARGV[10]: the most expired leases to sweep first
-- ARGV[11]: 1 to reply legacy trace contexts too (propagation on; see envelopes_of); 0 or absent otherwise
-- ARGV[12]: look-ahead in ms (time-ordered topics; absent: 0): take messages due up to now + look-ahead, and give
--           the next due hint that much before the first waiting message's due time (the consumer holds a message
--           taken ahead until it is due)
-- ARGV[13]: 1 when the consumer reads the slot's trace records itself (then they are not looked up here, and flag 4
--           says that the slot has some); absent: they are looked up here like envelopes
-- Returns: { token, Redis now (ms), next due hint, flags, member1, score1, [attempt1], [envelope1], member2, ... }
--   token: the fencing token of every member popped, in 1/1024 ms (the prepare score * 1024: an integer), 0 when none
--   flags: + 1 when the slot has failed messages and each member's score is followed by its attempt (without it
--   every attempt is 1, and the reply stays short); + 2 when each member's entry ends with its envelope ('' when none;
--   only when the slot has envelopes, or legacy contexts and they were asked for); + 4 when the consumer reads trace
--   records itself (ARGV[13]) and the slot has some: a body whose envelope is '' (or that came without one) may
--   have one; + 8 when the slot has messages with an expiry: then two counts follow the flags, before the members:
--   the messages that expired before they were handled and were dropped, and those moved to dead (see
--   expire_waiting in _common.lua); + 16 x the dead members the retention trimmed (the sweep's and expiry's burials).
--   next due hint: ms when the slot next needs a pop (<= now: more is due now), or -1 when it is empty: the
--   earliest of the first waiting message (minus the look-ahead), the first PRIORITY retry, and the first lease
--   deadline (its expiry must be swept).
--   attemptN: 1 for the first delivery, previous failures + 1 otherwise.
--#include _common.lua
write_when_full()

-- A member no message can have (0xFF 0xFF: no body starts with 0xFF, no id's UTF-8 has it), longer than
-- zset-max-listpack-value (64 by default) set well above it: see the first ZADD into prepare below
local function skiplist_seed()
    return '\255\255rmq: a new prepare key is a skiplist' .. string.rep('.', 256)
end
-- the fewest messages a pop takes at once for which a new prepare is made a skiplist: a small one is as cheap as a
-- listpack (few entries to walk), and the seed itself costs a pop a few µs
local SEED_FROM = 16

if redis.call('EXISTS', K_OWNER) == 1 then
    return redis.error_reply('RMQ_ORDERLY slot ' .. K_STORE .. ' is consumed by ORDERLY listeners (it has an'
        .. ' owner key); a topic is consumed in one mode: stop the ORDERLY listeners and call'
        .. ' RmqAdmin.endOrdering(topic) before consuming it concurrently')
end

local is_priority = ARGV[1] == '1'
local batch = tonumber(ARGV[2])
local now = now_ms()
local lease_ms = tonumber(ARGV[3])
-- time-ordered topics: messages due up to this are taken (now, without a look-ahead)
local ahead = (not is_priority and ARGV[12]) and tonumber(ARGV[12]) or 0
local take_until = now + ahead

sweep_expired(now, tonumber(ARGV[10]), is_priority, max_retries_of(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]),
    tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]))

if is_priority then
    local due = redis.call('ZRANGEBYSCORE', K_RETRY, '-inf', now, 'LIMIT', 0, 1000)
    for _, member in ipairs(due) do
        local priority = redis.call('HGET', K_PRIORITY, member) or 0
        -- NX: a duplicate sent during the backoff is newer and keeps its own priority.
        redis.call('ZADD', K_STORE, 'NX', priority, member)
        redis.call('ZREM', K_RETRY, member)
    end
end

-- Most slots have no failed messages, cancel marks, envelopes, legacy contexts or expiries: one EXISTS says so
local extras = redis.call('EXISTS', K_ATTEMPTS, K_CANCELLED, K_CONTEXT, K_MSG, K_TRACE, K_EXPIRY) > 0
-- messages that expired (or would expire before they fall due within the look-ahead) leave first, up to a bound per
-- pop; any left beyond it are passed over by the pages below (never taken) and leave at the next pops
local has_expiry = extras and redis.call('EXISTS', K_EXPIRY) == 1
local expired_dropped, expired_dead = 0, 0
if has_expiry then
    expired_dropped, expired_dead = expire_waiting(now, take_until, is_priority, 10 * batch + 100)
end
-- skip the per-message attempt lookup (and its reply element) without failures
local any_failures = extras and redis.call('EXISTS', K_ATTEMPTS) == 1
-- likewise the envelopes: looked up when the slot has any (an id message's payload is in its envelope), and legacy
-- trace contexts only when the consumer asks for them (propagation on)
local with_legacy = ARGV[11] == '1'
local reads_traces = ARGV[13] == '1'
local has_traces = extras and redis.call('EXISTS', K_TRACE) == 1
local with_contexts = extras and (redis.call('EXISTS', K_MSG) == 1 or (has_traces and not reads_traces)
        or (with_legacy and redis.call('EXISTS', K_CONTEXT) == 1))
local any_cancelled = extras and redis.call('EXISTS', K_CANCELLED) == 1
local out = { 0, now, -1, (any_failures and 1 or 0) + (with_contexts and 2 or 0)
        + ((has_traces and reads_traces) and 4 or 0) + (has_expiry and 8 or 0) + 16 * dead_trimmed }
if has_expiry then
    out[5] = expired_dropped
    out[6] = expired_dead
end
local taken, skipped, max_skipped = 0, 0, 10 * batch + 100
-- expired members the pages passed over (more than expire_waiting took out)
local passed_expired = 0
-- A prepare created by this pop is seeded as a skiplist (see the ZADD below); checked once, at the first page
local prepare_checked = false
-- Number-to-string conversion of arguments is costly in scripts: convert the token once, for the first page.
local token_arg, token_num = nil, nil
-- Multi-member commands per page (ZADD NX, ZREM, HMGET): a pop costs a handful of calls, not a few per message.
-- Tables are built once per page and per message as few as possible: each insert is paid per message.
while taken < batch and skipped < max_skipped do
    local want = batch - taken
    local page = due_page(is_priority, take_until, skipped, want)
    if #page == 0 then break end
    if not token_arg then
        local token = issue_lease(now, lease_ms)
        token_arg = string.format('%.17g', token)
        token_num = token
    end
    local members, lease_args = {}, {}
    -- with expiries: the page's members that have not expired, and where each is in the page (its score follows)
    local expires, page_index = nil, nil
    if has_expiry then
        local page_members = {}
        for i = 1, #page, 2 do page_members[#page_members + 1] = page[i] end
        expires = redis.call('ZMSCORE', K_EXPIRY, unpack(page_members))
    end
    for i = 1, #page, 2 do
        local expires_at = expires and expires[(i + 1) / 2]
        if expires_at and tonumber(expires_at) <= (is_priority and now or math.max(now, tonumber(page[i + 1]))) then
            -- left in store, passed over like a body in flight (expire_waiting takes it at a next pop)
            skipped = skipped + 1
            passed_expired = passed_expired + 1
        else
            local j = #members + 1
            members[j] = page[i]
            lease_args[2 * j - 1] = token_arg
            lease_args[2 * j] = page[i]
            if expires then
                page_index = page_index or {}
                page_index[j] = i + 1
            end
        end
    end
    if #members == #page / 2 then
        page_index = nil -- none was passed over: the members are the page in order
    end
    -- Redis keeps a small sorted set of short members (ids, short bodies) as a listpack, where each insert walks the
    -- whole set and parses every score: a pop's batch into ~100 leases in flight cost ~1 µs per message more than into
    -- a skiplist. One member longer than zset-max-listpack-value makes a new key a skiplist, and Redis does not turn
    -- it back while the key lives: the pop that creates prepare with a batch adds such a member and removes it again
    -- at once, so no one ever sees it.
    local seed = nil
    if not prepare_checked then
        prepare_checked = true
        if #members >= SEED_FROM and redis.call('EXISTS', K_PREPARE) == 0 then
            seed = skiplist_seed()
            redis.call('ZADD', K_PREPARE, 0, seed)
        end
    end
    -- NX leaves a body that is in flight alone; usually none is, and the count added says so without a lookup
    local take, take_index = members, page_index
    local added = #members > 0 and redis.call('ZADD', K_PREPARE, 'NX', unpack(lease_args)) or 0
    if seed then
        redis.call('ZREM', K_PREPARE, seed)
    end
    if added < #members then
        -- the token is this pop's own: the members that hold it were added now, the others were in flight
        local scores = redis.call('ZMSCORE', K_PREPARE, unpack(members))
        local in_flight = {}
        take, take_index = {}, {}
        for j, member in ipairs(members) do
            if tonumber(scores[j]) == token_num then
                take[#take + 1] = member
                take_index[#take_index + 1] = page_index and page_index[j] or 2 * j
            else
                skipped = skipped + 1
                in_flight[#in_flight + 1] = member
            end
        end
        redis.call('SADD', K_SKIPPED, unpack(in_flight))
    end
    if #take > 0 then
        if skipped == 0 and take == members then
            -- the page is the first #take of store in taking order: remove them by rank, without handing Redis
            -- every member again (each argument of a call from Lua is a string object copied for it)
            if is_priority then
                redis.call('ZREMRANGEBYRANK', K_STORE, -#take, -1)
            else
                redis.call('ZREMRANGEBYRANK', K_STORE, 0, #take - 1)
            end
        else
            redis.call('ZREM', K_STORE, unpack(take))
        end
        -- a cancel mark belongs to an earlier delivery that is over; this one starts clean
        if any_cancelled then redis.call('SREM', K_CANCELLED, unpack(take)) end
        if is_priority then
            local priority_args = {}
            for j, member in ipairs(take) do
                priority_args[2 * j - 1] = member
                priority_args[2 * j] = page[take_index and take_index[j] or 2 * j]
            end
            redis.call('HSET', K_PRIORITY, unpack(priority_args))
        end
        local n = #out
        if with_contexts then
            local failures = any_failures and redis.call('HMGET', K_ATTEMPTS, unpack(take))
            local contexts = envelopes_of(take, with_legacy, reads_traces) or {}
            for j, member in ipairs(take) do
                out[n + 1] = member
                out[n + 2] = page[take_index and take_index[j] or 2 * j]
                n = n + 2
                if failures then
                    out[n + 1] = tonumber(failures[j] or '0') + 1
                    n = n + 1
                end
                out[n + 1] = contexts[j] or ''
                n = n + 1
            end
        elseif any_failures then
            local failures = redis.call('HMGET', K_ATTEMPTS, unpack(take))
            for j, member in ipairs(take) do
                out[n + 1] = member
                out[n + 2] = page[take_index and take_index[j] or 2 * j]
                out[n + 3] = tonumber(failures[j] or '0') + 1
                n = n + 3
            end
        else
            for j, member in ipairs(take) do
                out[n + 1] = member
                out[n + 2] = page[take_index and take_index[j] or 2 * j]
                n = n + 2
            end
        end
        taken = taken + #take
    end
    if #page < 2 * want then break end
end
if taken > 0 then out[1] = token_num * TOKEN_UNITS end

local next_due = -1
if is_priority then
    if redis.call('ZCARD', K_STORE) > skipped then
        next_due = now
    else
        local first = redis.call('ZRANGE', K_RETRY, 0, 0, 'WITHSCORES')
        if #first > 0 then next_due = first[2] end
    end
else
    local first = redis.call('ZRANGE', K_STORE, skipped, skipped, 'WITHSCORES')
    if #first > 0 then next_due = ahead > 0 and tonumber(first[2]) - ahead or first[2] end
end
local lease_end = redis.call('ZRANGE', K_PREPARE, 0, 0, 'WITHSCORES')
if #lease_end > 0 and (next_due == -1 or tonumber(lease_end[2]) < tonumber(next_due)) then
    next_due = lease_end[2]
end
if passed_expired > 0 then
    -- expired members were left in store: the next pop takes them out (and the clean-up below must not run)
    next_due = now
end
out[3] = next_due
-- An empty slot (nothing waiting, in flight or backing off) with envelopes left has orphans only: a trace record a
-- native send wrote just before a ZADD that a failover lost, or one an engine before envelopes never forgot. Gone
-- with the slot's last message, unless dead messages still own theirs. (A native send whose ZADD is about to land
-- loses its trace link here: a link, never a message.) Expiry entries go with the last waiting or in-flight copy.
if next_due == -1 and extras then
    if redis.call('EXISTS', K_DEAD) == 0 then
        redis.call('DEL', K_MSG, K_CONTEXT, K_TRACE, K_EXPIRY)
    elseif has_expiry then
        redis.call('DEL', K_EXPIRY)
    end
end
return out
