-- Reading envelopes (layout: see Envelope.java), for the scripts that look inside one: the ORDERLY scripts (a
-- message's group). Included by those only, so other scripts do not pay for it.

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
