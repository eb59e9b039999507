#!lua
--[[
redriveDeadLetters: moves one page of a group's dead letters back to its requeue target.

Scans the dead-letter stream after the cursor, up to an end id fixed when the redrive started (so
entries dead-lettered again meanwhile are left for a later run), or looks up the ids it is given,
and for each dead letter of this stream/group (and reason, when given) adds a copy to the target
and deletes the dead letter, all in one script: a redrive killed between two calls is re-run from
the start and finds only what was not moved yet; nothing is ever both copied and still a dead
letter, or deleted without its copy.

Dead letters are never removed behind a reader's back: a dead letter that a consumer group of the
dead-letter stream itself holds pending, or has not been delivered yet, is left in place (neither
copied nor deleted) and counted for each such group (see "Readers" below).

The copy carries the original fields, byte for byte and in their order: every field of the dead
letter except the metadata fields, recognised by name wherever they stand (before or after the
original fields). Then the metadata of a requeued copy: x-original-id (kept), x-delivery-count 0,
x-redrive-count (the dead letter's own x-redrive-count + 1), x-redriven-at (Redis time, Unix ms).

Not fenced by the lease: it is run by an operator, and it is safe next to the daemon (the daemon
only appends to the dead-letter stream and never reads it back): it takes no fence.
On Redis Cluster both keys share the source stream's hash slot (the slot rule, src/core/slotRule.ts,
refuses any other layout at start-up), so the script runs on the node that owns them.

KEYS[1]  dead-letter stream
KEYS[2]  target stream (the group's requeueStream, or the source stream, or its retry lane)
KEYS[3]  the group's dead-letter index (src/core/deadLetterIndex.ts): each moved dead letter
         leaves it too, in the same call, so that its length stays the group's exact count

ARGV[1]  source stream (x-original-stream of the dead letters to move)
ARGV[2]  group (x-original-group of the dead letters to move)
ARGV[3]  cursor: the page starts after this id (exclusive); 0-0 to start
ARGV[4]  end id (inclusive): the last id of the dead-letter stream when the redrive started
ARGV[5]  scan limit: at most this many dead letters are examined
ARGV[6]  move limit: at most this many are moved
ARGV[7]  reason: max-deliveries | action | empty for any
ARGV[8]  1: dry run (count what would move, write nothing); 0: move
ARGV[9...]  optional: the dead-letter ids to move (--id); the cursor, end id and scan limit are
         then ignored, and the page is these ids
(Built and read by src/scripts/redriveDeadLetters.ts; ARGV as in purgeDeadLetters.lua.)

Returns { nextCursor, examined, moved, done, oversizedIds, heldBackBy, held, unknownIds }:
  done        1 when the range up to the end id has been scanned completely (always with ids)
  heldBackBy  flat { group, entries, ... }: the groups of the dead-letter stream that held
              selected dead letters back, with how many each
  held        selected dead letters held back (each counted once)
  unknownIds  the given ids that are not dead letters of this stream/group (and reason)
Errors (nothing changed): WRONGTYPE, IDSEXHAUSTED (the target cannot take this page's copies:
XADD would fail half-way).

Redis never rolls back a script: everything that could make a write fail is checked before the
first one (the key types, the target's ids, the size of each copy). Should an unforeseen error
still stop the copies, the dead letters already copied are deleted before the error is returned:
each dead letter is copied and deleted, or left untouched, never copied and left.
Included when loaded: includes/deadLetterPage.lua, redriveMove.lua (with streamIds.lua,
metadata.lua, deadLetterReaders.lua).
]]

--- @include "deadLetterPage"
--- @include "redriveMove"

local deadLetters, target, index = KEYS[1], KEYS[2], KEYS[3]
local source, group = ARGV[1], ARGV[2]
local cursor, endId = ARGV[3], ARGV[4]
local scanLimit, moveLimit = tonumber(ARGV[5]), tonumber(ARGV[6])
local reason = ARGV[7]
local dryRun = ARGV[8] == '1'

-- The checks (includes/redriveMove.lua): key types, then whether the target can take the copies.
local wrongType, exists = streamKeyTypes({ deadLetters, target, index })
if wrongType then return redis.error_reply(wrongType) end
if not dryRun then
  local exhausted = idsRefusal(exists, target, moveLimit)
  if exhausted then return redis.error_reply(exhausted) end
end

-- Readers: the consumer groups of the dead-letter stream itself (includes/deadLetterReaders.lua).
local readers = readersOf(exists[deadLetters] and deadLetters or nil)

-- The page: a range of the dead-letter stream, or the given ids (each once).
local page, byIds = deadLetterPage(deadLetters, cursor, endId, scanLimit, 9)

local now = redis.call('TIME')
local nowMs = string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))

local r = redriveMove(page, {
  deadLetters = deadLetters, index = index, target = target, source = source, group = group,
  reason = reason, moveLimit = moveLimit, dryRun = dryRun, byIds = byIds, readers = readers,
  nowMs = nowMs, cursor = cursor,
})
if r.failure then
  return redis.error_reply(r.failure .. ' (redrive stopped: ' .. r.deleted ..
    ' dead letter(s) of this page were moved, the others are untouched)')
end
local done = 0
if byIds or (#page < scanLimit and r.examined == #page) then done = 1 end
return { r.nextCursor, r.examined, r.moved, done, r.oversized, heldBackByOf(readers), r.held,
  r.unknown }
