-- The queue-size gauges of a fleet, read from the slots by one instance at a time and shared (RmqQueueSizeMeters):
-- per topic the figures an instance read last, and whose turn a read is. A topic whose figures are older than the
-- interval (or missing) is the caller's to read, unless another instance took that turn within the last interval;
-- the caller then writes what it read (a plain HSET of the sizes hash). So a fleet reads each topic about once per
-- interval, whatever its number of instances, and each instance pays this one call per interval.
--
-- KEYS[1]: <prefix>:{rmq-gauges}:sizes  HASH topic -> "<read at, Redis ms>|waiting|in flight|retrying|dead"
-- KEYS[2]: <prefix>:{rmq-gauges}:turns  HASH topic -> until when (Redis ms) the turn an instance took counts
-- ARGV[1]: the interval (ms); ARGV[2..]: the topics
-- Returns: { Redis now (ms), then per topic: its last figures ('' if none), 1 if the caller reads it now else 0 }
-- Both hashes expire 10 intervals after the last call: a fleet that stopped leaves nothing behind.
redis.call('HDEL', KEYS[2], '\255') -- first write: runs over maxmemory (see write_when_full in _common.lua)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local topics = { unpack(ARGV, 2) }
local out = { now }
if #topics == 0 then
    return out
end
local sizes = redis.call('HMGET', KEYS[1], unpack(topics))
local turns = redis.call('HMGET', KEYS[2], unpack(topics))
local taken = {}
for i, topic in ipairs(topics) do
    local figures = sizes[i] or ''
    local at = tonumber(string.match(figures, '^(%d+)|')) or 0
    local mine = 0
    if now - at >= interval and (not turns[i] or tonumber(turns[i]) <= now) then
        mine = 1
        taken[#taken + 1] = topic
        taken[#taken + 1] = now + interval
    end
    out[#out + 1] = figures
    out[#out + 1] = mine
end
if #taken > 0 then
    redis.call('HSET', KEYS[2], unpack(taken))
end
redis.call('PEXPIRE', KEYS[2], 10 * interval)
return out
