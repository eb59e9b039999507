#!lua
--[[
purgeDeadLetters: deletes one page of a group's dead letters.

Scans the dead-letter stream after the cursor up to an end id fixed when the purge started (the
last dead letter then, or the newest id old enough for --older-than-ms, whichever is smaller) and
deletes the dead letters of this stream/group (and reason, when given). Deleting is idempotent,
so an interrupted purge is simply run again.
Not fenced by the lease, like a redrive: it is run by an operator and only deletes dead letters,
which the daemon never reads back. One key, so it runs on Redis Cluster as is.

KEYS[1]  dead-letter stream
KEYS[2]  optional fence key; when present it must hold ARGV[8] or nothing changes

ARGV[1]  source stream (x-original-stream of the dead letters to delete)
ARGV[2]  group (x-original-group)
ARGV[3]  cursor: the page starts after this id (exclusive); 0-0 to start
ARGV[4]  end id (inclusive)
ARGV[5]  scan limit: at most this many dead letters are examined
ARGV[6]  delete limit: at most this many are deleted
ARGV[7]  reason: max-deliveries | action | empty for any
ARGV[8]  fence value (ignored without KEYS[2])
ARGV[9]  1: dry run (count, write nothing); 0: delete

Returns { nextCursor, examined, deleted, done }: done is 1 when the range has been scanned.
Errors (nothing changed): FENCED, WRONGTYPE.
]]

local deadLetters = KEYS[1]
local source, group = ARGV[1], ARGV[2]
local cursor, endId = ARGV[3], ARGV[4]
local scanLimit, deleteLimit = tonumber(ARGV[5]), tonumber(ARGV[6])
local reason = ARGV[7]
local dryRun = ARGV[9] == '1'

if #KEYS >= 2 and redis.call('GET', KEYS[2]) ~= ARGV[8] then
  return redis.error_reply('FENCED the lease is not held by this process')
end
local keyType = redis.call('TYPE', deadLetters)['ok']
if keyType ~= 'stream' and keyType ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. deadLetters .. ' holds a ' .. keyType .. ', not a stream')
end

local page = redis.call('XRANGE', deadLetters, '(' .. cursor, endId, 'COUNT', scanLimit)
local examined, nextCursor = 0, cursor
local toDelete = {}
for _, entry in ipairs(page) do
  if #toDelete >= deleteLimit then break end
  local id, fields = entry[1], entry[2]
  examined = examined + 1
  nextCursor = id
  local originalStream, originalGroup, deadLetterReason
  for i = 1, #fields, 2 do
    local name = fields[i]
    if name == 'x-original-stream' then originalStream = fields[i + 1]
    elseif name == 'x-original-group' then originalGroup = fields[i + 1]
    elseif name == 'x-dead-letter-reason' then deadLetterReason = fields[i + 1] end
  end
  if originalStream == source and originalGroup == group
    and (reason == '' or deadLetterReason == reason) then
    toDelete[#toDelete + 1] = id
  end
end

if not dryRun then
  for first = 1, #toDelete, 1000 do
    redis.call('XDEL', deadLetters, unpack(toDelete, first, math.min(first + 999, #toDelete)))
  end
end
local done = 0
if #page < scanLimit and examined == #page then done = 1 end
return { nextCursor, examined, #toDelete, done }
