-- Registers one instance's definition of a periodic schedule (see docs/scheduling.md). Every instance must hold the
-- same definition: a different one is refused while an instance holding the registered one has said so within the
-- liveness window, and replaces it after that (its holders are gone).
--
-- KEYS[1]: the schedule's hash, <prefix>:{rmq-schedules}:<name>
-- ARGV[1]: the definition's fingerprint
-- ARGV[2]: the liveness window in ms (how long a definition stays held after its holders last said so)
-- Returns: { 'conflict', Redis now (ms), the registered definition, ms since a holder last said so }
--          or { 'ok', Redis now (ms), the latest firing taken (ms) or '', when the definition was registered (ms) }

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local def = redis.call('HGET', KEYS[1], 'definition')
if def and def ~= ARGV[1] then
    local seen = tonumber(redis.call('HGET', KEYS[1], 'seen') or '0')
    if now - seen < tonumber(ARGV[2]) then
        return { 'conflict', now, def, now - seen }
    end
end
if def ~= ARGV[1] then
    redis.call('HSET', KEYS[1], 'definition', ARGV[1], 'since', now)
end
redis.call('HSET', KEYS[1], 'seen', now)
return { 'ok', now, redis.call('HGET', KEYS[1], 'last') or '', redis.call('HGET', KEYS[1], 'since') }
