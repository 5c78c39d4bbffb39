-- Helpers of the ORDERLY mode, pasted after _common.lua.
-- An ordered slot has an owner key (HASH id, epoch, until): only the instance holding the current epoch, before
-- `until` (Redis ms; 0 once released), may take or settle the slot's messages. The epoch is the fencing token: every
-- new owner gets a higher one. The slot's prepare ZSET then holds the messages taken out of store in order, with
-- their store score (due time or priority) instead of a lease deadline: the owner handles them head first, and
-- whatever an owner took and did not settle is handed to the next owner first, in the same order. A failed head
-- stays at the head; the time of its retry waits in the retry ZSET (so no later message can overtake it).

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

-- Records a failed attempt of the head `member` (still in prepare). Past max_retries, or with force_dead, it moves to
-- dead with `reason` and the slot moves on (returns 2); else it stays at the head until `retry_at` (returns 1).
local function orderly_fail(member, now, is_priority, max_retries, retry_at, reason, force_dead)
    local failures = redis.call('HINCRBY', K_ATTEMPTS, member, 1)
    if force_dead or failures > max_retries then
        local priority = ''
        if is_priority then
            priority = redis.call('ZSCORE', K_PREPARE, member) or ''
        end
        redis.call('ZREM', K_PREPARE, member)
        redis.call('ZREM', K_RETRY, member)
        bury(member, now, failures, priority, reason)
        return 2
    end
    redis.call('ZADD', K_RETRY, retry_at, member)
    return 1
end
