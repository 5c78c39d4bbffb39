-- Registers a topic definition cluster-wide, or returns the one already registered under that name.
--
-- KEYS[1]: <prefix>:topics (HASH topic -> "TYPE:slotAmount")
-- ARGV[1]: topic name, ARGV[2]: encoded definition
-- Returns: the definition registered for the name (equal to ARGV[2] unless another definition came first)
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
return redis.call('HGET', KEYS[1], ARGV[1])
