#!lua
--[[
moveFencingToken: on Redis Cluster, move the fencing-token counter past a stream's fence that the
leader met above its own token, if (and only if) the lease key still holds the leader's value.

Why: the counter is replicated asynchronously, and an operator may DEL it. A failover or a DEL can
hand a new leader a token below one that an earlier term already stored in a stream's slot fence
(src/sweep/slotFence.ts); every page on that stream would then be refused as FENCED, for good.
A stream's fence key lives in the stream's slot and the lease key in another one, so no single
script can read both: the caller reads the fence, and this script, in the lease key's slot,
checks that the lease is ours in the same atomic step as it moves the counter. A process that
lost the lease (expired, stolen, wiped by a failover) is refused here and moves nothing, so the
new token always belongs to the current holder of the lease.

KEYS[1]  lease key
KEYS[2]  fencing-token counter (same hash slot as the lease key)
KEYS[3]  holder record, a hash (same hash slot)
ARGV[1]  the lease value of the caller's term
ARGV[2]  the fence seen: the highest token stored in the stream's fence (a non-negative integer)

Returns the new token, max(counter, fence seen) + 1, or 0 when the lease key does not hold
ARGV[1] (nothing was written). The holder record's fencingToken follows when the record is ours.
Errors (nothing changed): OTHER, an ERR naming the argument or key that holds no token.
Everything that could fail is checked before the first write.
Built and read by src/scripts/moveFencingToken.ts.
]]

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if not string.match(ARGV[2], '^%d+$') or #ARGV[2] > 15 then
  return redis.error_reply('ERR moveFencingToken: the fence seen must be a non-negative integer, got ' .. ARGV[2])
end
local seen = tonumber(ARGV[2])
-- Fencing tokens are INCR results, far below 2^53: exact as Lua numbers.
local counter = 0
local stored = redis.call('GET', KEYS[2])
if stored then
  if not string.match(stored, '^%d+$') or #stored > 15 then
    return redis.error_reply('ERR moveFencingToken: ' .. KEYS[2] .. ' does not hold a fencing token')
  end
  counter = tonumber(stored)
end
local holderOurs = false
local holderType = redis.call('TYPE', KEYS[3])['ok']
if holderType == 'hash' then
  local record = redis.call('HGETALL', KEYS[3])
  for i = 1, #record, 2 do
    if record[i] == 'value' then holderOurs = record[i + 1] == ARGV[1] end
  end
end

local token = math.max(counter, seen) + 1
local text = string.format('%.0f', token)
redis.call('SET', KEYS[2], text)
if holderOurs then redis.call('HSET', KEYS[3], 'fencingToken', text) end
return token
