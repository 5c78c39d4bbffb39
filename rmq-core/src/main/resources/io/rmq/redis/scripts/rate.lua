-- Cluster-wide rate limit of one topic: a token bucket in Redis shared by every consumer of the topic. A consumer
-- asks for permits before it takes messages, and gives back the permits it did not use (it found fewer messages).
--
-- Runs while Redis is over maxmemory (two bounded fields; rate-limited consumers must drain a full Redis too).
-- KEYS[1]: <prefix>:{<topic>}:rate   HASH tokens, at (Redis ms of the last refill)
-- ARGV[1]: permits per second; ARGV[2]: burst (most permits the bucket holds); ARGV[3]: permits wanted
-- ARGV[4]: permits given back
-- Returns: { permits granted, ms until a permit is free (0 when some were granted or none were wanted) }
redis.call('HDEL', KEYS[1], '\255') -- first write: runs over maxmemory (see write_when_full in _common.lua)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate, burst, wanted = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1] or burst)
local at = tonumber(state[2] or now)
if now > at then
    tokens = tokens + (now - at) * rate / 1000
end
tokens = math.min(burst, tokens + tonumber(ARGV[4]))
local granted = math.min(wanted, math.floor(tokens))
tokens = tokens - granted
local wait = 0
if granted == 0 and wanted > 0 then
    wait = math.max(1, math.ceil((1 - tokens) * 1000 / rate))
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', math.max(now, at))
redis.call('PEXPIRE', KEYS[1], math.max(10000, math.ceil(burst * 2000 / rate)))
return { granted, wait }
