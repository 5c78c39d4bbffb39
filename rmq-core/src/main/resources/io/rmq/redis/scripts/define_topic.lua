-- Registers a topic definition cluster-wide, or returns the one already registered under that name.
-- A definition is "TYPE:slotAmount" or "TYPE:slotAmount:MODE" (MODE: the consume mode, CONCURRENT or ORDERLY, once a
-- listener declared it; definitions stored before the mode existed have none). A definition without a mode never
-- changes the stored one; one with a mode sets it where the stored definition has the same type and slot amount and
-- no mode yet. With ARGV[3] = 'mode' the mode is set whatever it was (RmqAdmin.endOrdering / beginOrdering).
--
-- Runs while Redis is over maxmemory (one field per topic: a consumer started while Redis is full registers its mode).
-- KEYS[1]: <prefix>:topics (HASH topic -> definition)
-- ARGV[1]: topic name, ARGV[2]: encoded definition, ARGV[3]: '' or 'mode'
-- Returns: the definition registered for the name (the caller compares it with its own)
redis.call('HDEL', KEYS[1], '\255') -- first write: runs over maxmemory (see write_when_full in _common.lua)
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
    redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
    return ARGV[2]
end
local shape, mode = string.match(ARGV[2], '^([^:]+:[^:]+):?(.*)$')
local current_shape, current_mode = string.match(current, '^([^:]+:[^:]+):?(.*)$')
if mode ~= '' and shape == current_shape and (current_mode == '' or ARGV[3] == 'mode') then
    redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
    return ARGV[2]
end
return current
