-- Helpers of the ORDERLY mode, pasted after _common.lua.
-- An ordered slot has an owner key (HASH id, epoch, until, decided, listed) while an owner holds it: only the instance
-- holding the current epoch, before `until` (Redis ms), may take or settle the slot's messages. A leased key (the
-- Redis coordinator; see own.lua) has `until` = ORDERLY_LEASED: it holds while its holder is listed in the topic's
-- membership, and is fenced by epoch alone (a takeover raises the epoch); `listed` is the membership's time of the
-- live list the holder claimed it with. The epoch is the fencing token:
-- every new owner gets a higher one (Redis numbers them max(previous + 1, Redis time in µs), so they keep growing
-- after a graceful release deleted the key; ZooKeeper's come from ZooKeeper). The slot's prepare ZSET then holds the
-- messages taken out of store in order, with their store score (due time or priority) instead of a lease deadline:
-- the owner handles them head first, and whatever an owner took and did not settle is handed to the next owner
-- first, in the same order. A failed head stays at the head; the time of its retry waits in the retry ZSET (so no
-- later message can overtake it). A graceful release puts what the owner held back into store (same scores, so the
-- same order), keeps the retry time of a head waiting for its retry (orderly_next honours it when it takes the head
-- from store again) and deletes the owner key: a stopped ORDERLY consumer leaves no owner key behind. An owner that
-- died leaves its key until the next owner takes over (own.lua) or RmqAdmin.endOrdering (once it is not live).

-- The `until` of a leased owner key: later than any clock (2^53 - 1 ms), so no time fences it; the digits are what
-- is stored (Lua's number formatting would round them).
local ORDERLY_LEASED = 9007199254740991
local ORDERLY_LEASED_DIGITS = '9007199254740991'

-- True when `epoch` no longer holds the slot (another epoch holds it, or its time ran out or was released): fenced.
local function orderly_fenced(epoch, now)
    local owner = redis.call('HMGET', K_OWNER, 'epoch', 'until')
    return tonumber(owner[1] or '-1') ~= epoch or tonumber(owner[2] or '0') <= now
end

-- The first `count` members of prepare in handling order, WITHSCORES.
local function orderly_held(is_priority, count)
    if is_priority then
        return redis.call('ZREVRANGE', K_PREPARE, 0, count - 1, 'WITHSCORES')
    end
    return redis.call('ZRANGE', K_PREPARE, 0, count - 1, 'WITHSCORES')
end

-- Removes a held message of an ordered slot for good (dropped or cancelled): it leaves prepare, its retry time and
-- its attempt count go with it, and the slot moves on.
local function orderly_drop(member)
    redis.call('ZREM', K_PREPARE, member)
    redis.call('ZREM', K_RETRY, member)
    redis.call('HDEL', K_ATTEMPTS, member)
    forget_envelopes({ member })
end

-- Records a failed attempt of the head `member` (still in prepare) and follows `action` (as fail() in _common.lua):
-- dead past max_retries or with 'd' (it moves to dead with `reason` and the slot moves on: returns 2); dropped with
-- 'x' or when it was cancelled while in flight (the slot moves on: returns 3); else it stays at the head until
-- `retry_at`, or now + the action's ms (returns 1).
local function orderly_fail(member, now, is_priority, max_retries, retry_at, reason, action)
    if action == 'x' or take_cancel_mark(member) then
        orderly_drop(member)
        return 3
    end
    local failures = redis.call('HINCRBY', K_ATTEMPTS, member, 1)
    local delay = tonumber(action or '')
    if action == 'd' or (not delay and failures > max_retries) then
        local priority = ''
        if is_priority then
            priority = redis.call('ZSCORE', K_PREPARE, member) or ''
        end
        redis.call('ZREM', K_PREPARE, member)
        redis.call('ZREM', K_RETRY, member)
        bury(member, now, failures, priority, reason)
        return 2
    end
    redis.call('ZADD', K_RETRY, delay and now + delay or retry_at, member)
    return 1
end

-- Puts every held message back into store with its score (merging with a waiting duplicate as a retry does); a
-- message cancelled while held leaves for good instead. Retry times stay (see above). Returns how many went back.
local function orderly_return_held(is_priority, now)
    local held = redis.call('ZRANGE', K_PREPARE, 0, -1, 'WITHSCORES')
    local returned = 0
    for i = 1, #held, 2 do
        redis.call('ZREM', K_PREPARE, held[i])
        if take_cancel_mark(held[i]) then
            orderly_drop(held[i])
        else
            return_to_store(held[i], held[i + 1], is_priority, now)
            returned = returned + 1
        end
    end
    return returned
end

-- Takes the cancelled members (cancel.lua marked them while they were held) out of the held page `held`
-- (member, score, ...): they are not handed out again. Returns true when any went.
local function orderly_drop_cancelled(held)
    if redis.call('EXISTS', K_CANCELLED) == 0 then
        return false
    end
    local dropped = false
    for i = 1, #held, 2 do
        if redis.call('SREM', K_CANCELLED, held[i]) == 1 then
            orderly_drop(held[i])
            dropped = true
        end
    end
    return dropped
end
