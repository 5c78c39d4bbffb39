-- Takes one firing of a periodic schedule: it may run only when it is later than the latest firing taken, which it
-- then becomes. `last` only grows, so each firing time is taken once, and never after a later one: a copy of a firing
-- sent again after the first was delivered and acked (a slow instance topping up its queue) is stale here. The same
-- call applies the cluster-wide pause and the misfire policy, on Redis's clock.
--
-- KEYS[1]: the schedule's hash, <prefix>:{rmq-schedules}:<name>
-- ARGV[1]: the firing (ms)
-- ARGV[2]: the firing after it (ms; a huge number when there is none)
-- ARGV[3]: the misfire threshold (ms): a firing taken later than this after its time is missed
-- ARGV[4]: the misfire policy, 'fire-once' (a missed firing runs, late, unless the next one is due too) or 'skip'
-- Returns: { outcome, Redis now (ms) }, outcome one of 'stale' (taken before, or a later one was), 'paused', 'missed'
--          (late, and dropped by the policy) or 'fire'

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local firing = tonumber(ARGV[1])
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '-1')
if last >= firing then
    return { 'stale', now }
end
redis.call('HSET', KEYS[1], 'last', ARGV[1])
if redis.call('HEXISTS', KEYS[1], 'paused') == 1 then
    return { 'paused', now }
end
if now - firing > tonumber(ARGV[3]) and (ARGV[4] == 'skip' or tonumber(ARGV[2]) <= now) then
    return { 'missed', now }
end
return { 'fire', now }
