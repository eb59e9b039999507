--[[
acquireLease: take a free lease together with a new fencing token, or adopt our own.

When the key already holds our value (an earlier attempt succeeded but its reply was lost), the
lease is adopted: its TTL is refreshed and the current counter returned. That counter is our
token: it only moves when this script sets a free key, and the key still holds the value our
acquisition wrote, so no acquisition happened since ours.

KEYS[1]  lease key
KEYS[2]  fencing-token counter (same hash slot as the lease key)
ARGV[1]  our value
ARGV[2]  TTL in ms

Returns { status, token }: status 0 held by another (token 0), 1 acquired, 2 adopted.
]]

local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return { 2, tonumber(redis.call('GET', KEYS[2])) or 0 }
end
if current then
  return { 0, 0 }
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return { 1, token }
