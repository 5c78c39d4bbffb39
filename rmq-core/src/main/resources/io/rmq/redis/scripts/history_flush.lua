-- Adds what one instance counted since its last flush to each topic's history, on Redis's clock, and drops what has
-- left the window. One HASH per topic, all under the hash tag {rmq-history} (one call, one cluster slot):
--   m<minute>  "sent handled failed dead" of that minute (minute = ms / 60000), followed by " trimmed" once a dead-letter
--              trim was counted in it, and by " trimmed expired" once an expiry was (engines before the retention wrote
--              and read four counts, engines before expiry five; an old engine's flush into a field with more starts
--              that field again from its own counts); kept while minute > now's - 61
--   h<hour>    the same for that hour (hour = ms / 3600000); kept while hour > now's - 25
--   trim       the minute of the last trim: the fields are scanned for old ones at most once a minute per topic
-- so a hash holds at most 61 + 25 + 1 small fields (a listpack), and expires 25 hours after its last flush.
--
-- Runs while Redis is over maxmemory (at most 87 small fields per topic: the counts of a drain are kept too).
-- KEYS[1..n]: <prefix>:{rmq-history}:<topic>, one per topic with counts
-- ARGV[1]: the time to file the counts under, in ms; '' (always, but in tests of the trim) for Redis's TIME
-- ARGV[2 + 6(i-1) .. 7 + 6(i-1)]: sent, handled, failed, dead, trimmed, expired for KEYS[i]
-- Returns: the time used (ms)
redis.call('HDEL', KEYS[1], '\255') -- first write: runs over maxmemory (see write_when_full in _common.lua)

local now = tonumber(ARGV[1])
if ARGV[1] == '' then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local minute = math.floor(now / 60000)
local hour = math.floor(now / 3600000)
local KEEP_MS = 25 * 3600000

local function add(key, field, s, h, f, d, t, x)
    local old = redis.call('HGET', key, field)
    if old then
        local a, b, c, e, g, y = string.match(old, '^(%d+) (%d+) (%d+) (%d+) ?(%d*) ?(%d*)$')
        if a then
            s, h, f, d = s + tonumber(a), h + tonumber(b), f + tonumber(c), d + tonumber(e)
            t, x = t + (tonumber(g) or 0), x + (tonumber(y) or 0)
        end
    end
    if x > 0 then
        redis.call('HSET', key, field, string.format('%d %d %d %d %d %d', s, h, f, d, t, x))
    elseif t > 0 then
        redis.call('HSET', key, field, string.format('%d %d %d %d %d', s, h, f, d, t))
    else
        redis.call('HSET', key, field, string.format('%d %d %d %d', s, h, f, d))
    end
end

local function trim(key)
    local last = tonumber(redis.call('HGET', key, 'trim') or '-1')
    if last == minute then
        return
    end
    local old = {}
    for _, field in ipairs(redis.call('HKEYS', key)) do
        local kind, n = string.match(field, '^([mh])(%d+)$')
        if kind == 'm' and tonumber(n) <= minute - 61 or kind == 'h' and tonumber(n) <= hour - 25 then
            old[#old + 1] = field
        end
    end
    if #old > 0 then
        redis.call('HDEL', key, unpack(old))
    end
    redis.call('HSET', key, 'trim', minute)
end

for i, key in ipairs(KEYS) do
    local base = 1 + 6 * (i - 1)
    local s, h, f, d, t = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]),
        tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5])
    local x = tonumber(ARGV[base + 6])
    trim(key)
    add(key, 'm' .. minute, s, h, f, d, t, x)
    add(key, 'h' .. hour, s, h, f, d, t, x)
    redis.call('PEXPIRE', key, KEEP_MS)
end
return now
