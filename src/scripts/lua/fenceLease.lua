#!lua
--[[
fenceLease: after redlock acquired the lease key, hand out the next fencing token and record
who holds the lease, if the key still holds the value redlock wrote.

Why a script of our own next to redlock: redlock's acquire script must return the number of keys
it set, so it cannot also return a token; and the token must only move for an acquisition that
still holds the key, which takes the GET and the INCR in one atomic step.

The holder record is read by `sweep` (exit 75 names the holder) and by operators (`HGETALL`).
It has no TTL: it is overwritten at each acquisition and only trusted while its `value` field
equals the lease key's value.

KEYS[1]  lease key (set by redlock)
KEYS[2]  fencing-token counter (same hash slot as the lease key)
KEYS[3]  holder record, a hash (same hash slot)
ARGV[1]  the value redlock wrote
ARGV[2]  holder host name
ARGV[3]  holder process id

Returns the new fencing token, or 0 when the key no longer holds ARGV[1] (it expired or was
taken between redlock's reply and this call: nothing was written).
Built and read by src/scripts/fenceLease.ts.
]]

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local token = redis.call('INCR', KEYS[2])
local now = redis.call('TIME')
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[3], 'value', ARGV[1], 'host', ARGV[2], 'pid', ARGV[3],
  'fencingToken', token,
  'acquiredAtMs', string.format('%.0f', now[1] * 1000 + math.floor(now[2] / 1000)))
return token
