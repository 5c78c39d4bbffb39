-- Sends messages into one slot's store with the merge rule of the topic type, and wakes sleeping consumers when a
-- message becomes the first of the slot.
--   RANGE_MERGE ('range'): due at Redis-now + timeRange, unless the body is already waiting: then it merges and keeps
--                          its original due time (ZADD NX).
--   PRIORITY / FIXED_TIME ('score'): score = priority or due time; a waiting duplicate takes the latest value.
--
-- KEYS[1..7]: store, prepare, dead, attempts, dead-info, retry, priority of the slot (only store is written)
-- ARGV[1]: 'range' or 'score'
-- ARGV[2]: 1 if the topic is PRIORITY, else 0
-- ARGV[3..]: parameter1, member1, parameter2, member2, ...  (parameter = timeRange ms, priority or due ms)
-- Returns: the number of messages added (the rest merged into waiting ones)
--#include _common.lua

local range = ARGV[1] == 'range'
local is_priority = ARGV[2] == '1'
local now = now_ms()
local added = 0
for i = 3, #ARGV, 2 do
    local member = ARGV[i + 1]
    if range then
        added = added + redis.call('ZADD', K_STORE, 'NX', now + tonumber(ARGV[i]), member)
    else
        added = added + redis.call('ZADD', K_STORE, ARGV[i], member)
    end
    wake_if_first(member, is_priority, now)
end
return added
