-- Reading envelopes (layout: see Envelope.java) and grouped members, for the scripts that look inside one: the
-- ORDERLY scripts (a message's group) and the dead queue's search (a grouped body's text). Included by those only, so
-- other scripts do not pay for it.

-- An unsigned LEB128 at byte i of s: its value and the index after it; nil when s ends first or it is too long.
local function uvarint_at(s, i)
    local value, scale = 0, 1
    while scale <= 268435456 do
        local b = string.byte(s, i)
        if not b then
            return nil
        end
        i = i + 1
        if b < 128 then
            return value + b * scale, i
        end
        value = value + (b - 128) * scale
        scale = scale * 128
    end
    return nil
end

-- A grouped member (0xFE, uvarint length, group, body: see EnvelopeKeys.java): the index of its group's first byte
-- and the group's length; nil for a member without its group in it, or a damaged one.
local function group_at(member)
    if string.byte(member, 1) ~= 254 then
        return nil
    end
    local length, i = uvarint_at(member, 2)
    if not length or i + length - 1 > #member then
        return nil
    end
    return i, length
end
