-- Ownership of an ORDERLY slot (see _orderly.lua): claims (or renews) and releases the slot's owner key, the fence
-- that orderly_next.lua checks. One holder at a time; each new holder gets a higher epoch. A release (graceful) puts
-- what the holder took and did not settle back into store, in order, and deletes the owner key.
-- Two kinds of claim. Leased (ownership time 0, the Redis coordinator): the key holds while its holder is listed in
-- the topic's membership (members.lua), with no deadline to renew; the claim carries the live list the claimant's
-- own heartbeat just returned (a script on a cluster cannot read the membership key) and takes the slot over only
-- from a holder missing from that list, and only when that list is newer than the one the holder claimed with (the
-- key's `listed`: both times are the membership's clock, so no two masters' clocks are compared). A holder listed at
-- its claim and missing from a later list has dropped out since, and its guard has lapsed; a holder that re-joined
-- and claimed after the claimant's list was read is alive. Timed (ownership time > 0: a coordinator that gives no live list, and
-- ZooKeeper, whose claims carry its own epoch): the key holds until `until`, which the holder renews, as before.
-- With the Redis numbering a claim succeeds only when the slot is free (never owned, released, a timed holder's time
-- ran out, a leased holder is not live); with ZooKeeper the coordinator has already decided: the claim carries
-- ZooKeeper's epoch and takes over from any holder with a lower one.
-- Keys written by engines before the leases (always timed) keep their `until`: a leased claim takes them over only
-- once it has passed. A leased key's `until` is ORDERLY_LEASED (far future), so such an engine never takes a leased
-- key over (it waits for a graceful release) and its orderly_next is not fenced by time.
-- A claim that takes over from a holder that did not release (it died, paused or lost Redis) counts a failed
-- attempt of each message that holder may have been handling (the first held one of each lane, unless it was waiting
-- for its retry): a message that kills its consumer every time ends in dead instead of stopping its lane for ever.
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 'claim' or 'release'
-- ARGV[2]: instance id
-- ARGV[3]: the epoch this instance holds (0: none; a release with 0 gives up whatever epoch this instance holds); a
--          claim with the current epoch renews it; any other claim by the holder itself gets a new epoch (fencing its
--          own stale steps, e.g. after it renewed too late)
-- ARGV[4]: ownership time in ms (timed: the holder must renew within it), or 0: leased (see above)
-- ARGV[5]: epoch decided by the coordinator (ZooKeeper), or 0 to let Redis number it
-- ARGV[6]: 1 if the topic is PRIORITY, else 0; ARGV[7]: max retries, with the dead-letter
--          retention (claim only; see max_retries_of)
-- ARGV[8]: leased claim: the Redis ms (membership's clock) at which the live list was read
-- ARGV[9]: leased claim: '1' when the list covers the instances of older engines (those listed in the topic's own
--          membership key, ids without the roster mark '.r'), '0' when it is the roster's alone: such a list never
--          takes a slot over from an older engine's instance (it may be alive, listed where this list did not look)
-- ARGV[10..]: the live ids
-- Returns: claim: { epoch, 0, took_over, dead members the retention trimmed } when held (took_over 1 when the slot was taken from another instance that
--          had not released it, else 0; a renewal: { epoch, 0 }); { 0, ms until the holder's time runs out (0: a
--          live leased holder, -1: stale epoch) } when not
--          (-2: an older engine's holder, and the list did not cover them)
--          release: { 1, messages put back into store } when released, { 0 } when this instance no longer held it
--#include _common.lua
--#include _envelope.lua
--#include _orderly.lua
write_when_full()

local now = now_ms()
local owner = redis.call('HMGET', K_OWNER, 'id', 'epoch', 'until', 'decided', 'listed')
local id, epoch, until_ms = owner[1], tonumber(owner[2] or '0'), tonumber(owner[3] or '0')
local me, held, ttl, decided = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])

if ARGV[1] == 'release' then
    if id == me and (epoch == held or held == 0) and until_ms > 0 then
        local returned = orderly_return_held(ARGV[6] == '1', now)
        redis.call('DEL', K_OWNER)
        return { 1, returned }
    end
    return { 0 }
end

if held > 0 and id == me and epoch == held and until_ms > now then
    if ttl > 0 then
        redis.call('HSET', K_OWNER, 'until', now + ttl)
    end
    return { epoch, 0 }
end
if decided > 0 then
    -- a stale coordinator decision is refused; an epoch Redis numbered ('decided' 0: Redis time in µs, larger than
    -- young ZooKeeper zxids) does not hold a ZooKeeper claim back, as Redis's small epochs never did before
    if decided <= epoch and owner[4] ~= '0' then
        if id ~= me then
            return { 0, -1 }
        end
        -- the holder itself claims again under the decision it holds: it lost the slot here (a step fenced once its
        -- time ran out while it was cut from Redis, not from ZooKeeper) and ZooKeeper still gives it the slot, which
        -- no other instance claims then. It gets it back under an epoch Redis numbers (below), which fences its own
        -- stale steps; refused, the slot went unserved for the life of the instance
        decided = 0
    end
elseif until_ms > now and id ~= me then
    if until_ms < ORDERLY_LEASED then
        return { 0, until_ms - now }
    end
    -- leased: taken over only by a leased claim whose live list misses the holder and is newer than the holder's
    local listed_at = tonumber(ARGV[8] or '0')
    if ttl > 0 or listed_at <= tonumber(owner[5] or '0') then
        return { 0, 0 }
    end
    for i = 10, #ARGV do
        if ARGV[i] == id then
            return { 0, 0 }
        end
    end
    if ARGV[9] ~= '1' and string.sub(id, -2) ~= '.r' then
        return { 0, -2 }
    end
end
if until_ms > 0 then
    -- the first held message of each lane (see orderly_lane) is what the holder may have been handling
    local held = orderly_held(ARGV[6] == '1', ORDERLY_HELD_MAX)
    if #held > 0 then
        local members = {}
        for i = 1, #held, 2 do members[#members + 1] = held[i] end
        local lanes = orderly_lanes(members)
        local retry_times = redis.call('EXISTS', K_RETRY) == 1 and redis.call('ZMSCORE', K_RETRY, unpack(members))
            or {}
        local seen = {}
        for j, member in ipairs(members) do
            if not seen[lanes[j]] then
                seen[lanes[j]] = true
                if not retry_times[j] then
                    -- only one of these was being handled (a group's head, not each): none goes to dead on this
                    -- count alone with max retries 0; no backoff (0 ms): the new owner retries it at once
                    fail(member, now, ARGV[6] == '1', math.max(max_retries_of(ARGV[7]), 1), 0, 1, 0, 0, 0,
                        'ordered consumer lost the slot while handling this message (died, paused or lost Redis)', '',
                        ORDERLY_FAILURE)
                end
            end
        end
    end
end
-- Redis's numbering: above the previous epoch and above the clock (µs), so that an epoch handed out before a graceful
-- release deleted the key is never handed out again (a holder that paused through all that stays fenced)
local t = redis.call('TIME')
local new_epoch = decided > 0 and decided or math.max(epoch + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
-- epochs are large: store the digits (ZooKeeper's: the argument's own), not Lua's rounded number formatting
redis.call('HSET', K_OWNER, 'id', me, 'epoch', decided > 0 and ARGV[5] or string.format('%.0f', new_epoch),
    'until', ttl > 0 and now + ttl or ORDERLY_LEASED_DIGITS, 'decided', decided > 0 and 1 or 0,
    'listed', ttl > 0 and '0' or (ARGV[8] or '0'))
return { new_epoch, 0, (until_ms > 0 and id and id ~= me) and 1 or 0, dead_trimmed }
