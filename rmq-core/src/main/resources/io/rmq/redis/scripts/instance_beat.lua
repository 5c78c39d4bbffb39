-- One heartbeat of an RMQ instance (see docs/operations.md, "Instances and cluster-wide pause"): renews its place in
-- the live list and its description, forgets entries that ran out, and returns the cluster-wide pauses, so that an
-- instance learns of a pause with the beat it sends anyway.
--
-- Runs while Redis is over maxmemory (a beat rewrites bounded state; pauses must reach instances when Redis is full):
-- its first write is the ZREMRANGEBYSCORE, which Redis does not refuse there (see write_when_full in _common.lua).
-- KEYS[1]: the live list, <prefix>:{rmq-instances}:live (ZSET instance id -> alive until, Redis ms)
-- KEYS[2]: the instance's description, <prefix>:{rmq-instances}:<id> (STRING, JSON; expires by itself)
-- KEYS[3]: the pauses, <prefix>:{rmq-instances}:paused (HASH "listener:<id>" / "topic:<name>" -> "<since ms>|<by>")
-- ARGV[1]: the instance id
-- ARGV[2]: the description (JSON)
-- ARGV[3]: how long the entry lives without another beat (ms)
-- Returns: { Redis now (ms), field1, value1, field2, value2, ... } (the pauses)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 1)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
local out = { now }
local pauses = redis.call('HGETALL', KEYS[3])
for i = 1, #pauses do out[#out + 1] = pauses[i] end
return out
