-- Lease-expiry sweep of one slot: every prepare entry whose deadline has passed counts as a failed attempt ("lease
-- expired") and is retried after its backoff, or moved to dead past max retries. Atomic and idempotent: any
-- consumer may run it at any time; an entry is moved once. (pop.lua runs the same sweep before it pops.)
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..17]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe, lease-seq, skipped of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2]: max retries, with the dead-letter retention (see max_retries_of in _common.lua)
-- ARGV[3..6]: backoff initial ms, multiplier, max ms, jitter (0..1)
-- ARGV[7]: a random number in [0,1) for the jitter
-- ARGV[8]: the most entries to move in this call
-- Returns: { moved to retry, moved to dead, dead members the retention trimmed }
--#include _common.lua
write_when_full()

local retried, dead = sweep_expired(now_ms(), tonumber(ARGV[8]), ARGV[1] == '1', max_retries_of(ARGV[2]),
    tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]))
return { retried, dead, dead_trimmed }
