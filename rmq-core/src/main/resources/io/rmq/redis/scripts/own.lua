-- Ownership of an ORDERLY slot (see _orderly.lua): claims (or renews) and releases the slot's owner key, the fence
-- that orderly_next.lua checks. One holder at a time; each new holder gets a higher epoch. A release (graceful) puts
-- what the holder took and did not settle back into store, in order, and deletes the owner key.
-- With the Redis coordinator a claim succeeds only when the slot is free (never owned, released, or its holder's
-- time ran out) and Redis numbers the epochs. With ZooKeeper, the coordinator has already decided: the claim
-- carries ZooKeeper's epoch and takes over from any holder with a lower one.
-- A claim that takes over from a holder that did not release (it died, paused or lost Redis) counts a failed
-- attempt of the message that holder was handling (the head, unless it was waiting for its retry): a message that
-- kills its consumer every time ends in dead instead of stopping the slot for ever.
--
-- KEYS[1..12]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace of
--             the slot
-- ARGV[1]: 'claim' or 'release'
-- ARGV[2]: instance id
-- ARGV[3]: the epoch this instance holds (0: none); a claim with the current epoch renews it; any other claim by the
--          holder itself gets a new epoch (fencing its own stale steps, e.g. after it renewed too late)
-- ARGV[4]: ownership time in ms (the holder must renew within it)
-- ARGV[5]: epoch decided by the coordinator (ZooKeeper), or 0 to let Redis number it
-- ARGV[6]: 1 if the topic is PRIORITY, else 0; ARGV[7]: max retries (claim only)
-- Returns: claim: { epoch, 0, took_over } when held (took_over 1 when the slot was taken from another instance that
--          had not released it, else 0; a renewal: { epoch, 0 }); { 0, ms until the holder's time runs out (or -1:
--          stale epoch) } when not
--          release: { 1, messages put back into store } when released, { 0 } when this instance no longer held it
--#include _common.lua
--#include _orderly.lua

local now = now_ms()
local owner = redis.call('HMGET', K_OWNER, 'id', 'epoch', 'until', 'decided')
local id, epoch, until_ms = owner[1], tonumber(owner[2] or '0'), tonumber(owner[3] or '0')
local me, held, ttl, decided = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])

if ARGV[1] == 'release' then
    if id == me and epoch == held and until_ms > 0 then
        local returned = orderly_return_held(ARGV[6] == '1', now)
        redis.call('DEL', K_OWNER)
        return { 1, returned }
    end
    return { 0 }
end

if held > 0 and id == me and epoch == held and until_ms > now then
    redis.call('HSET', K_OWNER, 'until', now + ttl)
    return { epoch, 0 }
end
if decided > 0 then
    -- a stale coordinator decision is refused; an epoch Redis numbered ('decided' 0: Redis time in µs, larger than
    -- young ZooKeeper zxids) does not hold a ZooKeeper claim back, as Redis's small epochs never did before
    if decided <= epoch and owner[4] ~= '0' then
        return { 0, -1 }
    end
elseif until_ms > now and id ~= me then
    return { 0, until_ms - now }
end
if until_ms > 0 then
    local head = orderly_held(ARGV[6] == '1', 1)
    if #head > 0 and not redis.call('ZSCORE', K_RETRY, head[1]) then
        orderly_fail(head[1], now, ARGV[6] == '1', tonumber(ARGV[7]), now,
            'ordered consumer lost the slot while handling this message (died, paused or lost Redis)', '')
    end
end
-- Redis's numbering: above the previous epoch and above the clock (µs), so that an epoch handed out before a graceful
-- release deleted the key is never handed out again (a holder that paused through all that stays fenced)
local t = redis.call('TIME')
local new_epoch = decided > 0 and decided or math.max(epoch + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
-- epochs are large: store the digits (ZooKeeper's: the argument's own), not Lua's rounded number formatting
redis.call('HSET', K_OWNER, 'id', me, 'epoch', decided > 0 and ARGV[5] or string.format('%.0f', new_epoch),
    'until', now + ttl, 'decided', decided > 0 and 1 or 0)
return { new_epoch, 0, (until_ms > 0 and id and id ~= me) and 1 or 0 }
