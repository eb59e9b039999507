#!lua
--[[
purgeDeadLetters: deletes one page of a group's dead letters.

Scans the dead-letter stream after the cursor up to an end id fixed when the purge started (the
last dead letter then, or the newest id old enough for --older-than-ms, whichever is smaller), or
looks up the ids it is given, and deletes the dead letters of this stream/group (and reason, when
given). Deleting is idempotent, so an interrupted purge is simply run again.
Dead letters are never removed behind a reader's back: a dead letter that a consumer group of the
dead-letter stream itself holds pending, or has not been delivered yet, is kept and counted for
each such group (includes/deadLetterReaders.lua, the same rule as in redriveDeadLetters.lua).
Not fenced by the lease, like a redrive: it is run by an operator and only deletes dead letters,
which the daemon never reads back: it takes no fence. Both keys share the dead-letter stream's
hash slot, so it runs on Redis Cluster as is.

KEYS[1]  dead-letter stream
KEYS[2]  the group's dead-letter index (src/core/deadLetterIndex.ts): each deleted dead letter
         leaves it too, so that its length stays the group's exact count

ARGV[1]  source stream (x-original-stream of the dead letters to delete)
ARGV[2]  group (x-original-group)
ARGV[3]  cursor: the page starts after this id (exclusive); 0-0 to start
ARGV[4]  end id (inclusive)
ARGV[5]  scan limit: at most this many dead letters are examined
ARGV[6]  delete limit: at most this many are deleted
ARGV[7]  reason: max-deliveries | action | empty for any
ARGV[8]  1: dry run (count, write nothing); 0: delete
ARGV[9...]  optional: the dead-letter ids to delete (--id); the cursor, end id and scan limit are
         then ignored, and the page is these ids
(Built and read by src/scripts/purgeDeadLetters.ts; ARGV as in redriveDeadLetters.lua.)

Returns { nextCursor, examined, deleted, done, heldBackBy, held, unknownIds }:
  done        1 when the range has been scanned (always with ids)
  heldBackBy  flat { group, entries, ... }: the groups of the dead-letter stream that held
              selected dead letters back, with how many each
  held        selected dead letters held back (each counted once)
  unknownIds  the given ids that are not dead letters of this stream/group (and reason)
Errors (nothing changed): WRONGTYPE.
Included when loaded: includes/deadLetterReaders.lua (and streamIds.lua), includes/deadLetterPage.lua.
]]

--- @include "deadLetterReaders"
--- @include "deadLetterPage"

local deadLetters, index = KEYS[1], KEYS[2]
local source, group = ARGV[1], ARGV[2]
local cursor, endId = ARGV[3], ARGV[4]
local scanLimit, deleteLimit = tonumber(ARGV[5]), tonumber(ARGV[6])
local reason = ARGV[7]
local dryRun = ARGV[8] == '1'

local keyType = redis.call('TYPE', deadLetters)['ok']
for _, key in ipairs({ deadLetters, index }) do
  local found = redis.call('TYPE', key)['ok']
  if found ~= 'stream' and found ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. found .. ', not a stream')
  end
end

------------------------------------------------------------------------------------------------
-- Readers: the consumer groups of the dead-letter stream itself (includes/deadLetterReaders.lua).
local readers = readersOf(keyType == 'stream' and deadLetters or nil)
local function heldBack(id) return heldBackFrom(deadLetters, readers, id) end

------------------------------------------------------------------------------------------------
-- The page: a range of the dead-letter stream, or the given ids (each once).

local unknown = {}
local page, byIds = deadLetterPage(deadLetters, cursor, endId, scanLimit, 9)

local examined, held, nextCursor = 0, 0, cursor
local toDelete = {}
for _, entry in ipairs(page) do
  if #toDelete >= deleteLimit then break end
  local id, fields = entry[1], entry[2] or {}
  examined = examined + 1
  nextCursor = id
  local originalStream, originalGroup, deadLetterReason
  for i = 1, #fields, 2 do
    local name = fields[i]
    if name == 'x-original-stream' then originalStream = fields[i + 1]
    elseif name == 'x-original-group' then originalGroup = fields[i + 1]
    elseif name == 'x-dead-letter-reason' then deadLetterReason = fields[i + 1] end
  end
  if originalStream ~= source or originalGroup ~= group
    or (reason ~= '' and deadLetterReason ~= reason) then
    if byIds then unknown[#unknown + 1] = id end
  elseif heldBack(id) then
    held = held + 1
  else
    toDelete[#toDelete + 1] = id
  end
end

if not dryRun then
  for first = 1, #toDelete, 1000 do
    redis.call('XDEL', deadLetters, unpack(toDelete, first, math.min(first + 999, #toDelete)))
    redis.call('XDEL', index, unpack(toDelete, first, math.min(first + 999, #toDelete)))
  end
end
local done = 0
if byIds or (#page < scanLimit and examined == #page) then done = 1 end
return { nextCursor, examined, #toDelete, done, heldBackByOf(readers), held, unknown }
