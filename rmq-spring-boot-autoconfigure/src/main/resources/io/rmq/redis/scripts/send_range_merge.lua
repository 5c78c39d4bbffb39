-- Sends RANGE_MERGE messages into one slot: each is due `timeRange` ms after Redis-now, unless the body is
-- already waiting in store, in which case it merges and keeps its original due time (ZADD NX).
--
-- KEYS[1..7]: store, prepare, dead, attempts, dead-info, retry, priority of the slot (only store is written)
-- ARGV: timeRange1, member1, timeRange2, member2, ...
-- Returns: the number of messages added (the rest merged)
--#include _common.lua

local now = now_ms()
local added = 0
for i = 1, #ARGV, 2 do
    added = added + redis.call('ZADD', K_STORE, 'NX', now + tonumber(ARGV[i]), ARGV[i + 1])
end
return added
