-- Helpers of the ORDERLY mode, pasted after _common.lua.
-- An ordered slot has an owner key (HASH id, epoch, until, decided, listed) while an owner holds it: only the instance
-- holding the current epoch, before `until` (Redis ms), may take or settle the slot's messages. A leased key (the
-- Redis coordinator; see own.lua) has `until` = ORDERLY_LEASED: it holds while its holder is listed in the topic's
-- membership, and is fenced by epoch alone (a takeover raises the epoch); `listed` is the membership's time of the
-- live list the holder claimed it with. The epoch is the fencing token:
-- every new owner gets a higher one (Redis numbers them max(previous + 1, Redis time in µs), so they keep growing
-- after a graceful release deleted the key; ZooKeeper's come from ZooKeeper). The slot's prepare ZSET then holds the
-- messages taken out of store in order, with their store score (due time or priority) instead of a lease deadline:
-- the owner handles them head first, and whatever an owner took and did not settle is handed to the next owner
-- first, in the same order. A failed head stays at the head; the time of its retry waits in the retry ZSET (so no
-- later message can overtake it). A graceful release puts what the owner held back into store (same scores, so the
-- same order), keeps the retry time of a head waiting for its retry (orderly_next honours it when it takes the head
-- from store again) and deletes the owner key: a stopped ORDERLY consumer leaves no owner key behind. An owner that
-- died leaves its key until the next owner takes over (own.lua) or RmqAdmin.endOrdering (once it is not live).

-- The `until` of a leased owner key: later than any clock (2^53 - 1 ms), so no time fences it; the digits are what
-- is stored (Lua's number formatting would round them).
local ORDERLY_LEASED = 9007199254740991
local ORDERLY_LEASED_DIGITS = '9007199254740991'

-- True when `epoch` no longer holds the slot (another epoch holds it, or its time ran out or was released): fenced.
local function orderly_fenced(epoch, now)
    local owner = redis.call('HMGET', K_OWNER, 'epoch', 'until')
    return tonumber(owner[1] or '-1') ~= epoch or tonumber(owner[2] or '0') <= now
end

-- The first `count` members of prepare in handling order, WITHSCORES.
local function orderly_held(is_priority, count)
    if is_priority then
        return redis.call('ZREVRANGE', K_PREPARE, 0, count - 1, 'WITHSCORES')
    end
    return redis.call('ZRANGE', K_PREPARE, 0, count - 1, 'WITHSCORES')
end

-- Removes a held message of an ordered slot for good (dropped or cancelled): it leaves prepare, its retry time and
-- its attempt count go with it, and the slot moves on.
local function orderly_drop(member)
    redis.call('ZREM', K_PREPARE, member)
    redis.call('ZREM', K_RETRY, member)
    redis.call('HDEL', K_ATTEMPTS, member)
    redis.call('HDEL', K_ERRORS, member)
    forget_envelopes({ member })
end

-- fail()'s mode (see _common.lua) for the head `member` of an ordered slot, still in prepare: dead or dropped, it
-- leaves prepare (and its retry time) and its lane moves on; else it stays at the head, its lane suspended, until
-- its retry time in the retry ZSET.
local ORDERLY_FAILURE = {
    drop = orderly_drop,
    leave = function(member, is_priority)
        local priority = ''
        if is_priority then
            priority = redis.call('ZSCORE', K_PREPARE, member) or ''
        end
        redis.call('ZREM', K_PREPARE, member)
        redis.call('ZREM', K_RETRY, member)
        return priority
    end,
    wait = function(member, is_priority, now, due)
        redis.call('ZADD', K_RETRY, due, member)
    end,
}

-- Puts every held message back into store with its score (merging with a waiting duplicate as a retry does); a
-- message cancelled while held leaves for good instead. Retry times stay (see above). Returns how many went back.
local function orderly_return_held(is_priority, now)
    local held = redis.call('ZRANGE', K_PREPARE, 0, -1, 'WITHSCORES')
    local returned = 0
    for i = 1, #held, 2 do
        redis.call('ZREM', K_PREPARE, held[i])
        if take_cancel_mark(held[i]) then
            orderly_drop(held[i])
        else
            return_to_store(held[i], held[i + 1], is_priority, now)
            returned = returned + 1
        end
    end
    return returned
end

-- Takes the cancelled members (cancel.lua marked them while they were held) out of the held page `held`
-- (member, score, ...): they are not handed out again. Returns true when any went.
local function orderly_drop_cancelled(held)
    if redis.call('EXISTS', K_CANCELLED) == 0 then
        return false
    end
    local dropped = false
    for i = 1, #held, 2 do
        if redis.call('SREM', K_CANCELLED, held[i]) == 1 then
            orderly_drop(held[i])
            dropped = true
        end
    end
    return dropped
end

-- The lane of a message: its group, or '' for a message without one (sent without a group, before its sender knew
-- the topic ORDERLY, or with a legacy trace context): those share the slot's one common lane, handled in slot order
-- as before groups were stored. Lanes are what an owner runs in parallel; each strictly in order. A sender that knows
-- the topic is ORDERLY stores the group of a body in its member (0xFE, uvarint length, group, body: see
-- EnvelopeKeys.java), read here without a look-up; an id message's (and one an older engine sent) as the header
-- `rmq-group` of its envelope, whose layout (see Envelope.java) is: flags; [1] uvarint length, payload; [2] 25 trace
-- bytes; [4] uvarint count, then per header uvarint length, name, uvarint length, value (uvarint_at, _envelope.lua).
-- A damaged member or envelope: ''.
local function orderly_lane(member, envelope)
    if string.byte(member, 1) == 254 then
        local i, length = group_at(member)
        return i and string.sub(member, i, i + length - 1) or ''
    end
    if not envelope or envelope == '' then
        return ''
    end
    local flags = string.byte(envelope, 1)
    if flags >= 32 or math.floor(flags / 4) % 2 == 0 then
        return ''
    end
    local i = 2
    if flags % 2 == 1 then
        local length
        length, i = uvarint_at(envelope, i)
        if not length then
            return ''
        end
        i = i + length
    end
    if math.floor(flags / 2) % 2 == 1 then
        i = i + 25
    end
    local count
    count, i = uvarint_at(envelope, i)
    for _ = 1, count or 0 do
        local name_length, value_length
        name_length, i = uvarint_at(envelope, i)
        if not name_length then
            return ''
        end
        local name = string.sub(envelope, i, i + name_length - 1)
        value_length, i = uvarint_at(envelope, i + name_length)
        if not value_length then
            return ''
        end
        if name == 'rmq-group' then
            return string.sub(envelope, i, i + value_length - 1)
        end
        i = i + value_length
    end
    return ''
end

-- The envelopes of `members` (see envelopes_of; nil when the slot has none) and their lanes, both indexed like them.
local function orderly_envelopes(members, with_legacy)
    local lanes = {}
    local envelopes = #members > 0 and envelopes_of(members, with_legacy) or nil
    for j = 1, #members do
        lanes[j] = orderly_lane(members[j], envelopes and envelopes[j])
    end
    return envelopes, lanes
end

-- The lanes of `members` alone, indexed like them: envelopes are looked up only for members without their group.
local function orderly_lanes(members)
    local lanes, rest, at = {}, {}, {}
    for j = 1, #members do
        if string.byte(members[j], 1) == 254 then
            lanes[j] = orderly_lane(members[j], nil)
        else
            rest[#rest + 1] = members[j]
            at[#at + 1] = j
        end
    end
    if #rest > 0 then
        local envelopes = envelopes_of(rest, false)
        for k = 1, #rest do
            lanes[at[k]] = orderly_lane(rest[k], envelopes and envelopes[k])
        end
    end
    return lanes
end

-- The most held messages a step or a claim reads at once (Lua's unpack refuses ~8,000 values): orderly_next takes
-- nothing new while prepare holds more than this less a batch, nor past 1,000 waiting heads.
local ORDERLY_HELD_MAX = 4000
