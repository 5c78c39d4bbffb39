-- An RMQ instance leaves the live list on shutdown (a dead one ages out instead: see instance_beat.lua).
--
-- Runs while Redis is over maxmemory as it is: its first write is a DEL, which Redis does not refuse there.
-- KEYS[1]: the live list, <prefix>:{rmq-instances}:live
-- KEYS[2]: the instance's description, <prefix>:{rmq-instances}:<id>
-- ARGV[1]: the instance id
-- Returns: 1 when it was listed, else 0

redis.call('DEL', KEYS[2])
return redis.call('ZREM', KEYS[1], ARGV[1])
