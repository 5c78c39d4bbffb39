-- One heartbeat of an engine for all its consumers that the roster lists (ConsumerRoster): its CONCURRENT containers
-- that share slots and its ORDERLY containers' memberships (the lease of their slots: see own.lua). The engine has one
-- entry per timeout among its containers ("<roster id>/<ttl>", usually one: containers of equal timeouts share it), so
-- that no container counts as alive longer, or shorter, than its own timeout. A beat renews every entry, lists an
-- entry's containers (topic and member id each) when they changed or when the entry was not listed (its time ran out:
-- another beat dropped it with its containers), forgets entries whose time ran out, and returns every listed entry.
-- So an idle engine costs Redis one call per beat, whatever the number of its containers and topics: ZREM (of
-- nothing: see below), TIME, ZRANGEBYSCORE, ZADD per entry and HGETALL.
--
-- Runs while Redis is over maxmemory (a beat rewrites bounded state; consumers must keep their shares and slots when
-- it is full).
-- KEYS[1]: <prefix>:{rmq-consumers}:live     ZSET entry id -> Redis ms until which it counts as alive
-- KEYS[2]: <prefix>:{rmq-consumers}:members  HASH entry id -> its containers, "<topic>\t<member id>" lines (ORDERLY
--          memberships: "orderly:<topic>\t<instance id>"; a topic name has no colon)
-- ARGV[1]: 'beat', or 'read' (nothing written: who is listed)
-- ARGV[2..]: per entry of this engine, four values: entry id; ttl in ms ('0': take the entry off); its lines; '1' when
--            the lines changed since the last beat that answered, else '0'
-- Returns: { Redis now (ms), one character per entry given: '1' when it was not listed before this beat, else '0';
--            then id1, lines1, id2, lines2, ... (every listed entry, this engine's included) }
redis.call('ZREM', KEYS[1], '\255') -- first write: runs over maxmemory (see write_when_full in _common.lua)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = {}
if ARGV[1] ~= 'read' then
    local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
    if #gone > 0 then
        redis.call('ZREM', KEYS[1], unpack(gone))
        redis.call('HDEL', KEYS[2], unpack(gone))
    end
    for i = 2, #ARGV, 4 do
        local entry, ttl = ARGV[i], tonumber(ARGV[i + 1])
        if ttl == 0 then
            redis.call('ZREM', KEYS[1], entry)
            redis.call('HDEL', KEYS[2], entry)
            added[#added + 1] = '0'
        else
            local new = redis.call('ZADD', KEYS[1], now + ttl, entry)
            if new == 1 or ARGV[i + 3] == '1' then
                redis.call('HSET', KEYS[2], entry, ARGV[i + 2])
            end
            added[#added + 1] = tostring(new)
        end
    end
end
local out = { now, table.concat(added) }
local all = redis.call('HGETALL', KEYS[2])
if ARGV[1] == 'read' then
    -- entries whose time ran out and that no beat has dropped yet are not listed
    local live = {}
    for _, entry in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')) do
        live[entry] = true
    end
    for i = 1, #all, 2 do
        if live[all[i]] then
            out[#out + 1] = all[i]
            out[#out + 1] = all[i + 1]
        end
    end
    return out
end
for i = 1, #all do out[#out + 1] = all[i] end
return out
