-- One heartbeat of an engine for all its CONCURRENT containers that share slots (ConsumerRoster): renews the
-- engine's place in the live list, lists its containers (topic and member id each) when they changed or when the
-- engine was not listed (its time ran out: another beat dropped it with its containers), forgets engines whose time
-- ran out, and returns every listed container. So an idle engine costs Redis one call per beat, whatever the number
-- of its containers and topics: ZREM (of nothing: see below), TIME, ZRANGEBYSCORE, ZADD and HGETALL.
--
-- Runs while Redis is over maxmemory (a beat rewrites bounded state; consumers must keep their shares when it is full).
-- KEYS[1]: <prefix>:{rmq-consumers}:live     ZSET engine roster id -> Redis ms until which it counts as alive
-- KEYS[2]: <prefix>:{rmq-consumers}:members  HASH engine roster id -> its containers, "<topic>\t<member id>" lines
-- ARGV[1]: the engine's roster id; ARGV[2]: ttl in ms; ARGV[3]: its containers' lines ('' with ARGV[4] 'leave')
-- ARGV[4]: 'beat' (lines unchanged since the last beat that answered), 'list' (lines changed) or 'leave'
-- Returns: { Redis now (ms), id1, lines1, id2, lines2, ... } (every listed engine, this one included unless it left)
redis.call('ZREM', KEYS[1], '\255') -- first write: runs over maxmemory (see write_when_full in _common.lua)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me, action = ARGV[1], ARGV[4]
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
if #gone > 0 then
    redis.call('ZREM', KEYS[1], unpack(gone))
    redis.call('HDEL', KEYS[2], unpack(gone))
end
if action == 'leave' then
    redis.call('ZREM', KEYS[1], me)
    redis.call('HDEL', KEYS[2], me)
else
    local added = redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), me)
    if added == 1 or action == 'list' then
        redis.call('HSET', KEYS[2], me, ARGV[3])
    end
end
local out = { now }
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all do out[#out + 1] = all[i] end
return out
