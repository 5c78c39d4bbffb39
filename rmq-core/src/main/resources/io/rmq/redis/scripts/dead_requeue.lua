-- Takes messages out of the dead queue of one slot and makes them deliverable again with a fresh attempt count:
-- time-ordered topics due now, PRIORITY topics with the priority they had. A duplicate already waiting in store
-- merges (time-ordered: the earlier time wins; PRIORITY: the waiting one keeps its priority). A requeued message no
-- longer expires (an operator asked for it to be handled), nor does a duplicate it merges with.
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: when no members follow, the most entries to requeue (oldest first)
-- ARGV[3..]: the members to requeue (those not in dead are ignored)
-- Returns: the number requeued
--#include _common.lua
write_when_full()

local is_priority = ARGV[1] == '1'
local members = {}
if #ARGV > 2 then
    for i = 3, #ARGV do members[#members + 1] = ARGV[i] end
else
    members = redis.call('ZRANGE', K_DEAD, 0, tonumber(ARGV[2]) - 1)
end
local now = now_ms()
local moved = 0
local has_expiry = redis.call('EXISTS', K_EXPIRY) == 1
for _, member in ipairs(members) do
    if redis.call('ZREM', K_DEAD, member) == 1 then
        local info = redis.call('HGET', K_DEAD_INFO, member) or ''
        redis.call('HDEL', K_DEAD_INFO, member)
        local score = now
        if is_priority then
            score = tonumber(string.match(info, '^[^\n]*\n([^\n]*)\n') or '') or 0
        end
        return_to_store(member, score, is_priority, now)
        if has_expiry then redis.call('ZREM', K_EXPIRY, member) end
        moved = moved + 1
    end
end
return moved
