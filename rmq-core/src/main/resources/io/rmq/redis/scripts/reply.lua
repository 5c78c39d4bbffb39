-- Delivers a reply to a requester's inbox (see RmqReplies): appends it to the inbox LIST and bounds the list, so that
-- the replies of a requester that is gone (killed, stopped) never pile up: the list expires ARGV[2] ms after its last
-- reply, and keeps at most ARGV[3] replies (the oldest go first). A live requester takes the replies out as they come.
--
-- KEYS[1]: the requester's inbox (<prefix>:{rmq-replies:<inbox id>})
-- ARGV[1]: the reply: correlation id, 0x00, status ('0' a value, '1' a failure, '2' no value), then the value's bytes
--          or the failure's text
-- ARGV[2]: how long an untaken reply is kept (ms); ARGV[3]: the most replies an inbox keeps
-- Returns: the inbox's length after the append
local length = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local most = tonumber(ARGV[3])
if length > most then
    redis.call('LTRIM', KEYS[1], length - most, -1)
    length = most
end
return length
