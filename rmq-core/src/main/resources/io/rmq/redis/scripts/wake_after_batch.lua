-- Runs right after a batch was written into one slot's store with a native multi-member ZADD (batch sends skip
-- send.lua: a script pays for every argument it is handed, a native ZADD does not). Wakes sleeping consumers when
-- the batch holds the slot's first message, as send.lua does for single sends.
--
-- KEYS[1..10]: the slot's keys (only store is read)
-- ARGV[1]: 1 if the topic is PRIORITY (always wakes: due now), else 0
-- ARGV[2]: the lowest score the batch wrote (due time ms; ignored for PRIORITY)
-- Returns: 1 if it published, else 0
--#include _common.lua

if ARGV[1] == '1' then
    redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. now_ms())
    return 1
end
-- The first score can only be at or below the batch's lowest; equal means the batch now holds the first message.
local first = redis.call('ZRANGE', K_STORE, 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) >= tonumber(ARGV[2]) then
    redis.call('PUBLISH', WAKE_CHANNEL, K_STORE .. '|' .. first[2])
    return 1
end
return 0
