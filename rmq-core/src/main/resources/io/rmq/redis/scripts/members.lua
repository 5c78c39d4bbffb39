-- Membership of the ORDERLY consumers of one topic (the Redis coordinator): a heartbeat keeps an instance listed
-- until now + ttl; instances whose time ran out are dropped. Every instance assigns the slots from the same list.
--
-- KEYS[1]: <prefix>:{<topic>}:members   ZSET member=instance id, score=Redis ms until which it counts as alive
-- ARGV[1]: 'beat' or 'leave'; ARGV[2]: instance id; ARGV[3]: ttl in ms
-- Returns: the live instance ids (any order)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[1] == 'leave' then
    redis.call('ZREM', KEYS[1], ARGV[2])
else
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
