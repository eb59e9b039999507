#!lua
--[[
restoreDeadLetters: writes one batch of saved dead letters (a `dlq purge --save` file) back to the
group's requeue target, as redriveDeadLetters.lua writes a redriven copy, each at most once.

Each saved dead letter comes with its id in the dead-letter stream it was saved from; the ids
restored are kept in a sorted set (score: Redis time of the restore, Unix ms), checked and added in
this same script, so a file restored twice, or again after a run that died half-way, writes each
dead letter once. The set forgets what it holds after the retention given (ARGV[2]): members
older than that are dropped on each call, and the key expires that long after its last write.

The copy carries the saved fields, byte for byte and in their order, except the metadata fields
(recognised by name wherever they stand), then: x-original-id (the saved one, else the dead
letter's id), x-delivery-count 0, x-redrive-count (the saved x-redrive-count + 1), x-redriven-at
(Redis time, Unix ms).

Not fenced by the lease, like redriveDeadLetters.lua: an operator runs it, and it takes no fence.
On Redis Cluster both keys share the source stream's hash slot (the restored set is named after
the group's dead-letter index, which shares the dead-letter stream's slot; the slot rule keeps
that the source's, as the target's).

KEYS[1]  target stream (the group's requeueStream, or the source stream, or its retry lane)
KEYS[2]  restored: sorted set of the dead-letter ids already restored for this group

ARGV[1]  1: dry run (count what would be written, write nothing); 0: write
ARGV[2]  retention of the restored set, ms
ARGV[3...]  per dead letter: its id, the number of field values n, then the n values (names and
         values alternating, as saved)
(Built and read by src/scripts/restoreDeadLetters.ts.)

Returns { restored, already }: written (in a dry run: that would be), and skipped as restored before.
Errors (nothing changed): WRONGTYPE, IDSEXHAUSTED (the target cannot take this batch's copies).

Everything that could make a write fail is checked before the first one (the key types, the
target's ids); the caller keeps each batch under the Lua stack's limit on arguments.
Included when loaded: includes/streamIds.lua, metadata.lua.
]]

--- @include "streamIds"
--- @include "metadata"

local target, restoredKey = KEYS[1], KEYS[2]
local dryRun = ARGV[1] == '1'
local retentionMs = tonumber(ARGV[2])

local targetType = redis.call('TYPE', target)['ok']
if targetType ~= 'stream' and targetType ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. target .. ' holds a ' .. targetType .. ', not a stream')
end
local setType = redis.call('TYPE', restoredKey)['ok']
if setType ~= 'zset' and setType ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. restoredKey .. ' holds a ' .. setType ..
    ', not a sorted set')
end

local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local nowText = string.format('%d', nowMs)

-- The batch: { id, fields } each, and which are new (not restored before, each id once).
local batch, seen, fresh = {}, {}, 0
local i = 3
while i <= #ARGV do
  local id, n = ARGV[i], tonumber(ARGV[i + 1])
  local entry = { id = id, first = i + 2, last = i + 1 + n }
  i = i + 2 + n
  local restoredAt = setType == 'zset' and redis.call('ZSCORE', restoredKey, id) or false
  if restoredAt and tonumber(restoredAt) < nowMs - retentionMs then restoredAt = false end
  entry.new = not restoredAt and not seen[id]
  seen[id] = true
  if entry.new then fresh = fresh + 1 end
  batch[#batch + 1] = entry
end
if dryRun then return { fresh, #batch - fresh } end

if targetType == 'stream' and fresh > 0 then
  local info = redis.call('XINFO', 'STREAM', target)
  local last = nil
  for k = 1, #info, 2 do
    if info[k] == 'last-generated-id' then last = info[k + 1] end
  end
  if not idsLeftFor(last, fresh) then
    return redis.error_reply('IDSEXHAUSTED stream ' .. target .. ' has used up its ids (last id ' ..
      last .. '): XADD would fail; nothing was restored')
  end
end

------------------------------------------------------------------------------------------------
-- The writes.
redis.call('ZREMRANGEBYSCORE', restoredKey, '-inf', string.format('(%d', nowMs - retentionMs))
local METADATA = metadataNames(DEAD_LETTER_METADATA, REDRIVE_METADATA)
for _, entry in ipairs(batch) do
  if entry.new then
    local args = { 'XADD', target, '*' }
    local n = 3
    local meta = {}
    for k = entry.first, entry.last, 2 do
      local name, value = ARGV[k], ARGV[k + 1]
      if METADATA[name] then
        meta[name] = value
      else
        args[n + 1] = name
        args[n + 2] = value
        n = n + 2
      end
    end
    n = appendRedriveMetadata(args, n, meta, entry.id, nowText)
    redis.call(unpack(args, 1, n))
    redis.call('ZADD', restoredKey, nowText, entry.id)
  end
end
if fresh > 0 then redis.call('PEXPIRE', restoredKey, retentionMs) end
return { fresh, #batch - fresh }
