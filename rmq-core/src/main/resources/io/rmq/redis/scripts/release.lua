-- Returns fetched-but-unhandled deliveries to store at once (graceful shutdown): no attempt is counted and no
-- backoff applies. Fenced like ack: only entries whose prepare score still equals the consumer's token move.
-- Each goes back with the score it was popped with; a duplicate waiting meanwhile merges (time-ordered: the
-- earlier time wins; PRIORITY: the waiting, newer one keeps its priority).
--
-- Runs while Redis is over maxmemory (it frees or moves, it does not grow memory): see write_when_full in _common.lua.
-- KEYS[1..17]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe, lease-seq, skipped of the slot
-- ARGV[1]: 1 if the topic is PRIORITY, else 0
-- ARGV[2..]: member1, token1, score1, member2, token2, score2, ...   (token in 1/1024 ms, as pop.lua and extend.lua
--           reply it; score: the store score it was popped with)
-- Returns: the number of deliveries returned to store (a delivery cancelled while in flight is dropped instead)
--#include _common.lua
write_when_full()

local is_priority = ARGV[1] == '1'
local now = now_ms()
local released = 0
for i = 2, #ARGV, 3 do
    local member, token, score = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
    local current = redis.call('ZSCORE', K_PREPARE, member)
    if current and token_of(current) == token then
        redis.call('ZREM', K_PREPARE, member)
        forget_skipped({ member })
        if take_cancel_mark(member) then
            forget(member) -- cancelled while in flight: not handed out again
        else
            return_to_store(member, score, is_priority, now)
            if is_priority and not redis.call('ZSCORE', K_RETRY, member) then
                redis.call('HDEL', K_PRIORITY, member)
            end
            released = released + 1
        end
    end
end
return released
