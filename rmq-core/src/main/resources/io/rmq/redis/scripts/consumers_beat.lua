-- One heartbeat of an engine for all its consumers that the roster lists (ConsumerRoster): its CONCURRENT containers
-- that share slots and its ORDERLY containers' memberships (the lease of their slots: see own.lua). The engine has one
-- entry per timeout among its containers ("<roster id>/<ttl>", usually one: containers of equal timeouts share it), so
-- that no container counts as alive longer, or shorter, than its own timeout. A beat renews every entry, lists an
-- entry's containers (topic and member id each) when they changed or when the entry was not listed (its time ran out:
-- another beat dropped it with its containers), forgets entries whose time ran out, and returns every listed entry —
-- unless the listing is the one the engine read last: every beat that changes the listing gives it a new version, a
-- member of the live list with a negative score (entries' scores are times: never negative), and a beat whose engine
-- names the current version returns no lines. So an idle engine costs Redis one call per beat, whatever the number of
-- its containers and topics: TIME, ZREMRANGEBYSCORE, ZADD per entry and ZSCORE.
-- Roster engines before the version read the whole listing at every beat, and drop the version as an entry whose time
-- ran out: the next beat of this engine finds it gone and reads everything, so their changes are never missed.
--
-- Runs while Redis is over maxmemory (a beat rewrites bounded state; consumers must keep their shares and slots when
-- it is full): its first write is the ZREMRANGEBYSCORE, which Redis does not refuse there (see write_when_full in
-- _common.lua).
-- KEYS[1]: <prefix>:{rmq-consumers}:live     ZSET entry id -> Redis ms until which it counts as alive; and 0xFF 'v' ->
--          minus the listing's version (Redis µs when it changed)
-- KEYS[2]: <prefix>:{rmq-consumers}:members  HASH entry id -> its containers, "<topic>\t<member id>" lines (ORDERLY
--          memberships: "orderly:<topic>\t<instance id>"; a topic name has no colon)
-- ARGV[1]: 'beat', or 'read' (nothing written: who is listed)
-- ARGV[2]: the version of the listing the engine read last ('0': none)
-- ARGV[3..]: per entry of this engine, four values: entry id; ttl in ms ('0': take the entry off); its lines; '1' when
--            the lines changed since the last beat that answered, else '0'
-- Returns: { Redis now (ms), one character per entry given: '1' when it was not listed before this beat, else '0',
--            the listing's version, 1 when the lines follow (else the listing is the version the engine named), then
--            id1, lines1, id2, lines2, ... (every listed entry, this engine's included) }
local VERSION = '\255v'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Appends every listed entry whose time has not run out (id, lines) to out; returns the ids of the members fields
-- whose entry is gone (its time ran out, or a beat removed it without its field)
local function list_live(out)
    local live, stale = {}, {}
    for _, entry in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')) do
        live[entry] = true
    end
    local all = redis.call('HGETALL', KEYS[2])
    for i = 1, #all, 2 do
        if live[all[i]] then
            out[#out + 1] = all[i]
            out[#out + 1] = all[i + 1]
        else
            stale[#stale + 1] = all[i]
        end
    end
    return stale
end

if ARGV[1] == 'read' then
    -- entries whose time ran out and that no beat has dropped yet are not listed
    local out = { now, '', 0, 1 }
    list_live(out)
    return out
end
-- first write; the version's negative score stays
local changed = redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, '(' .. now) > 0
local added = {}
for i = 3, #ARGV, 4 do
    local entry, ttl = ARGV[i], tonumber(ARGV[i + 1])
    if ttl == 0 then
        -- an entry taken off after another beat dropped it changes nothing
        if redis.call('ZREM', KEYS[1], entry) + redis.call('HDEL', KEYS[2], entry) > 0 then
            changed = true
        end
        added[#added + 1] = '0'
    else
        local new = redis.call('ZADD', KEYS[1], now + ttl, entry)
        if new == 1 or ARGV[i + 3] == '1' then
            redis.call('HSET', KEYS[2], entry, ARGV[i + 2])
            changed = true
        end
        added[#added + 1] = tostring(new)
    end
end
local score = redis.call('ZSCORE', KEYS[1], VERSION)
local version = score and -tonumber(score)
if version and not changed and version == tonumber(ARGV[2]) then
    return { now, table.concat(added), version, 0 }
end
if changed or not version then
    -- a new version, never one handed out before (Redis µs; above the last one should the clock step back)
    local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
    version = math.max(us, (version or 0) + 1)
    redis.call('ZADD', KEYS[1], -version, VERSION)
end
local out = { now, table.concat(added), version, 1 }
-- the listings of entries whose time ran out go with them (they were removed above, or by an older engine's beat)
local stale = list_live(out)
if #stale > 0 then
    redis.call('HDEL', KEYS[2], unpack(stale))
end
return out
