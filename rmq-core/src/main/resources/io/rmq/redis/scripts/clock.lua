-- Reads Redis's clock on the master that owns the slot (the keys only route the call; nothing is read). Batch sends
-- write RANGE_MERGE messages with a native ZADD and compute their due time from this reading (see RedisClock).
--
-- KEYS[1..15]: the slot's keys (routing only)
-- Returns: Redis's time in ms
--#include _common.lua

return now_ms()
