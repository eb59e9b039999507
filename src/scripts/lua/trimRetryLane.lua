#!lua
--[[
trimRetryLane: removes from a group's retry lane the copies the group has acknowledged.

A lane holds requeued copies for one group (retryLane: true). Once the group has delivered and
acknowledged a copy, nothing needs it: the lane is trimmed with the safe-trim rule of safeTrim.lua
(includes/groupNeeds.lua), up to the oldest id some group of the lane still needs (its oldest
pending copy, or the first one after its last-delivered-id). XTRIM MINID with that exact id removes
nothing at or after it: no pending copy loses its body and no copy waiting to be delivered goes.
No entry is read, and one call removes about ARGV[3] copies at most: when more may be removable
(the lane's length less its group's lag: the copies up to its last-delivered id), the call
removes whole stream nodes only (XTRIM MINID ~ ... LIMIT), and says there may be more; once few
are left (or no whole node is below the floor), the exact trim. (A lane of a million acknowledged
copies of 200 bytes took 0.24 s in one exact XTRIM; a call with a page of 2,000 about 0.5 ms.)
Without the lane's own group (destroyed by hand, not yet re-created by ensureRetryLane.lua)
nothing is removed: which copies it had acknowledged is no longer known, and all that is left
will be delivered again.

KEYS[1]  the retry lane (in the source stream's hash slot)
KEYS[2]  optional fence key (src/sweep/slotFence.ts). One server: the lease key, which must hold
         ARGV[2] or nothing changes. Redis Cluster (ARGV[2] is 'token:<n>'): a key in the
         stream's slot holding the highest fencing token that wrote there; a lower n changes
         nothing, a higher one is stored before the first write

ARGV[1]  group (the lane's owner)
ARGV[2]  fence value, or 'token:<n>' on Cluster (ignored without KEYS[2])
ARGV[3]  page: remove about this many copies at most

Returns { removed, length, more }: copies removed, XLEN of the lane afterwards (0 when missing),
and 1 when more may be removable (call again).
Errors (nothing changed): FENCED, WRONGTYPE.
Built and read by src/scripts/trimRetryLane.ts. Included when loaded: includes/fence.lua,
streamIds.lua, groupNeeds.lua.
]]

--- @include "fence"
--- @include "streamIds"
--- @include "groupNeeds"

local lane, group = KEYS[1], ARGV[1]

local fenced, fenceToken = checkDeclaredFence(2, ARGV[2], 'wrote here')
if fenced then return redis.error_reply('FENCED ' .. fenced) end
local keyType = redis.call('TYPE', lane)['ok']
if keyType == 'none' then return { 0, 0 } end
if keyType ~= 'stream' then
  return redis.error_reply('WRONGTYPE retry lane ' .. lane .. ' holds a ' .. keyType)
end

local page = tonumber(ARGV[3])
local floor, needs = groupNeeds(lane)
local owner = nil
for _, need in ipairs(needs) do
  if need[1] == group then owner = need[3] end
end
local length = redis.call('XLEN', lane)
if owner == nil then return { 0, length, 0 } end

-- At most this many copies are at or before the group's last-delivered id (its lag counts those
-- after it); with the lag unknown, the whole lane.
local removable = length
for _, need in ipairs(needs) do
  local lag = need[3]['lag']
  if lag and length - lag < removable then removable = length - lag end
end

-- Checks passed: this stream is now maintained under our token (see the fence above).
if fenceToken then redis.call('SET', KEYS[2], fenceToken) end
if removable <= page then
  local removed = redis.call('XTRIM', lane, 'MINID', '=', floor)
  return { removed, length - removed, 0 }
end
local removed = redis.call('XTRIM', lane, 'MINID', '~', floor, 'LIMIT', page)
if removed > 0 then return { removed, length - removed, 1 } end
-- No whole node below the floor: what is below it sits in the first node, a few copies.
removed = redis.call('XTRIM', lane, 'MINID', '=', floor)
return { removed, length - removed, 0 }
