-- Deletes messages from the dead queue of one slot, with their details (and trace contexts, unless the body is also
-- waiting or in flight).
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: when no members follow, the most entries to delete (oldest first)
-- ARGV[2..]: the members to delete
-- Returns: the number deleted
--#include _common.lua
write_when_full()

local members = {}
if #ARGV > 1 then
    for i = 2, #ARGV do members[#members + 1] = ARGV[i] end
else
    members = redis.call('ZRANGE', K_DEAD, 0, tonumber(ARGV[1]) - 1)
end
-- their envelopes too, unless a copy of the body is still waiting or in flight
return delete_dead(members)
