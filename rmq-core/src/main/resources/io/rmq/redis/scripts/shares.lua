-- Membership of the CONCURRENT consumers of one topic (see SlotShares): a heartbeat keeps a container listed until
-- now + ttl and returns the live list, from which every container computes the same preferred share of the slots;
-- containers whose time ran out are dropped. A leave (graceful stop or pause) drops the container at once.
--
-- KEYS[1]: <prefix>:{<topic>}:consumers   ZSET member=container instance id, score=Redis ms until which it is alive
-- ARGV[1]: 'beat' or 'leave'; ARGV[2]: instance id; ARGV[3]: ttl in ms
-- Returns: the live instance ids (any order; empty after a leave of the last one)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[1] == 'leave' then
    redis.call('ZREM', KEYS[1], ARGV[2])
else
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
