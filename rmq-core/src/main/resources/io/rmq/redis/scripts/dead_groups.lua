-- Counts part of the dead queue of one slot by error class (read only), oldest death first: the class of a dead
-- message is its last error up to the first ':' or ';' (an exception's class name, as the engine writes reasons:
-- "java.net.SocketTimeoutException: Read timed out"), trimmed and cut to 200 bytes; '' when it kept none.
-- Bounded: examines at most ARGV[2] entries from rank ARGV[1] on, so a caller can spread one budget over the slots.
--
-- KEYS[1..15]: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context, msg, trace,
--             errors, expiry, dedupe of the slot
-- ARGV[1]: the rank to start at; ARGV[2]: the most entries to examine
-- Returns: { examined, left (entries after the last one examined), class1, count1, class2, count2, ... }
--#include _common.lua

local start, budget = tonumber(ARGV[1]), tonumber(ARGV[2])
local size = redis.call('ZCARD', K_DEAD)
local examined = 0
local counts, order = {}, {}

while examined < budget and start + examined < size do
    local from = start + examined
    local members = redis.call('ZRANGE', K_DEAD, from, from + math.min(500, budget - examined) - 1)
    if #members == 0 then break end
    local infos = redis.call('HMGET', K_DEAD_INFO, unpack(members))
    for j = 1, #members do
        local err = string.match(infos[j] or '', '^[^\n]*\n[^\n]*\n(.*)$') or ''
        local class = string.match(string.match(err, '^[^:;]*'), '^%s*(.-)%s*$')
        class = string.sub(class, 1, 200)
        if not counts[class] then
            counts[class] = 0
            order[#order + 1] = class
        end
        counts[class] = counts[class] + 1
    end
    examined = examined + #members
end

local out = { examined, math.max(0, size - start - examined) }
for _, class in ipairs(order) do
    out[#out + 1] = class
    out[#out + 1] = counts[class]
end
return out
