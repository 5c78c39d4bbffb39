-- Reads one topic's history (see history_flush.lua) with Redis's time, so that the reader places "the last 60
-- minutes" on the clock the counts were filed by.
--
-- KEYS[1]: <prefix>:{rmq-history}:<topic>
-- Returns: { Redis now (ms), field, value, field, value, ... } (HGETALL's pairs; the trim field included)

local t = redis.call('TIME')
local out = { tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) }
for _, item in ipairs(redis.call('HGETALL', KEYS[1])) do
    out[#out + 1] = item
end
return out
