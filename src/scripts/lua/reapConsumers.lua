#!lua
--[[
reapConsumers: deletes the consumers of a group that own nothing and were inactive long enough.

XGROUP DELCONSUMER discards the pending entries of the consumer it deletes (redis/redis #11567),
so the check (nothing pending) and the delete must be one atomic step: inside this script no
client can deliver an entry to a consumer between the two. A consumer that reads after the script
is simply created again by its XREADGROUP.

Inactivity is XINFO CONSUMERS `inactive` (7.2+: since the last successful read or claim) where the
server reports it, else `idle` (7.0: since the last interaction of any kind); a consumer whose
`inactive` is -1 (never read anything) is judged by `idle`, so one that polls is kept.

KEYS[1]  stream
KEYS[2]  optional fence key (src/sweep/slotFence.ts). One server: the lease key, which must hold
         ARGV[5] or nothing changes. Redis Cluster (ARGV[5] is 'token:<n>'): a key in the
         stream's slot holding the highest fencing token that wrote there; a lower n changes
         nothing, a higher one is stored before the first write

ARGV[1]  group
ARGV[2]  inactive at least this many ms
ARGV[3]  protected consumer name, never deleted (the janitor's own consumer); empty for none
ARGV[4]  1: dry run (report, delete nothing); 0: delete
ARGV[5]  fence value, or 'token:<n>' on Cluster (ignored without KEYS[2])

Returns { reapedNames, keptWithPending, usedInactive }: usedInactive is 1 when the server
reported `inactive`.
Errors (nothing changed): FENCED, NOGROUP, WRONGTYPE, NOSUCHKEY ("ERR no such key").
Built and read by src/scripts/reapConsumers.ts. Included when loaded: includes/fence.lua.
]]

--- @include "fence"

local stream, group = KEYS[1], ARGV[1]
local minInactiveMs = tonumber(ARGV[2])
local protected = ARGV[3]
local dryRun = ARGV[4] == '1'

-- The fence (includes/fence.lua): refused, or the token to store before the first write.
local fenced, fenceToken = checkDeclaredFence(2, ARGV[5], 'wrote here')
if fenced then return redis.error_reply('FENCED ' .. fenced) end

local consumers = redis.pcall('XINFO', 'CONSUMERS', stream, group)
if consumers.err then return redis.error_reply(consumers.err) end

local reaped, keptWithPending, usedInactive = {}, 0, 0
for _, flat in ipairs(consumers) do
  local info = {}
  for i = 1, #flat, 2 do info[flat[i]] = flat[i + 1] end
  local inactiveMs = info['idle']
  if info['inactive'] ~= nil then
    usedInactive = 1
    if info['inactive'] >= 0 then inactiveMs = info['inactive'] end
  end
  if info['pending'] > 0 then
    keptWithPending = keptWithPending + 1
  elseif info['name'] ~= protected and inactiveMs >= minInactiveMs then
    reaped[#reaped + 1] = info['name']
  end
end

if not dryRun then
  -- Checks passed: this stream is now maintained under our token (see the fence above).
  if fenceToken then redis.call('SET', KEYS[2], fenceToken) end
  for _, name in ipairs(reaped) do
    redis.call('XGROUP', 'DELCONSUMER', stream, group, name)
  end
end
return { reaped, keptWithPending, usedInactive }
