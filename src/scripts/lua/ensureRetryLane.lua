#!lua
--[[
ensureRetryLane: makes sure a group's retry lane exists and is read by that group alone.

The lane holds the group's requeued copies (retryLane: true); consumers of the group read it with
the same group name. It is created when first needed and again after a DEL, with its group at id
0 (not $): copies added before the group existed (a sweep racing a DEL, a redrive) must still be
delivered. Another group on the lane would receive the copies too: refused, nothing changed.
A lane that exists without its group (XGROUP DESTROY by hand) gets the group again at id 0 too:
the leader trims the lane to its live work (trimRetryLane.lua), so what is left is what the old
group had not acknowledged (plus the copies it acknowledged since the last trim), and all of it
is delivered again; the reply says so, for a warning and an event.

KEYS[1]  the retry lane (in the source stream's hash slot)
KEYS[2]  optional fence key (src/sweep/slotFence.ts). One server: the lease key, which must hold
         ARGV[2] or nothing changes. Redis Cluster (ARGV[2] is 'token:<n>'): a key in the
         stream's slot holding the highest fencing token that wrote there; a lower n changes
         nothing, a higher one is stored before the first write

ARGV[1]  group
ARGV[2]  fence value, or 'token:<n>' on Cluster (ignored without KEYS[2])

Returns { created, otherGroups, recreated }: created is 1 when this call created the lane's group
(and the lane if missing); otherGroups names the other groups reading the lane (then nothing
changed); recreated is 1 when the lane existed without its group.
Errors (nothing changed): FENCED, WRONGTYPE.
Built and read by src/scripts/ensureRetryLane.ts. Included when loaded: includes/fence.lua.
]]

--- @include "fence"

local lane, group = KEYS[1], ARGV[1]

local keyType = redis.call('TYPE', lane).ok
if keyType ~= 'none' and keyType ~= 'stream' then
  return redis.error_reply('WRONGTYPE retry lane ' .. lane .. ' holds a ' .. keyType)
end
if keyType == 'stream' then
  local found, others = false, {}
  for _, flat in ipairs(redis.call('XINFO', 'GROUPS', lane)) do
    for i = 1, #flat, 2 do
      if flat[i] == 'name' then
        if flat[i + 1] == group then found = true else others[#others + 1] = flat[i + 1] end
      end
    end
  end
  if #others > 0 then return { 0, others, 0 } end
  if found then return { 0, {}, 0 } end
end

local fenced, fenceToken = checkDeclaredFence(2, ARGV[2], 'wrote here')
if fenced then return redis.error_reply('FENCED ' .. fenced) end
-- Checks passed: this stream is now maintained under our token (see the fence above).
if fenceToken then redis.call('SET', KEYS[2], fenceToken) end
redis.call('XGROUP', 'CREATE', lane, group, '0', 'MKSTREAM')
return { 1, {}, keyType == 'stream' and 1 or 0 }
