-- sweepPage.lua's copies (requeued copies and dead letters): the original fields first, byte for
-- byte and in order, then the metadata (includes/metadata.lua: the names and their order). A
-- field of the original named like a metadata field is dropped from its place (the metadata
-- carries its new value), so a copy of a copy keeps the user's fields in front.
-- Uses, declared by sweepPage.lua before it: call, unpack, target, deadLetters, originalStream,
-- group, startedUs, arg, deadLetters.

-- redis.call passes its arguments on the Lua C stack, which holds about 8000 values.
local maxFieldValues = 7900

-- Where each metadata field stands in a copy, by name: its name at the returned position after
-- the copy's own fields, its value right after (the include's order); and how many values the
-- metadata adds. Each copy writes every name and value at its position: no per-entry loop, and
-- no position written out by hand.
local function positionsOf(names)
  local at = {}
  for i, name in ipairs(names) do at[name] = 2 * i - 1 end
  return at, 2 * #names
end

local requeueAt, requeueMetadataLength = positionsOf(REQUEUE_METADATA)
local deadLetterAt, deadLetterMetadataLength = positionsOf(DEAD_LETTER_METADATA)
-- As locals, read once per call: an upvalue read per field written, no hash lookup per entry.
local REQUEUED_ORIGINAL_ID = requeueAt['x-original-id']
local REQUEUED_DELIVERY_COUNT = requeueAt['x-delivery-count']
local DEAD_ORIGINAL_ID = deadLetterAt['x-original-id']
local DEAD_ORIGINAL_STREAM = deadLetterAt['x-original-stream']
local DEAD_ORIGINAL_GROUP = deadLetterAt['x-original-group']
local DEAD_DELIVERY_COUNT = deadLetterAt['x-delivery-count']
local DEAD_REASON = deadLetterAt['x-dead-letter-reason']
local DEAD_AT = deadLetterAt['x-dead-lettered-at']
local DEAD_LAST_CONSUMER = deadLetterAt['x-last-consumer']
local deadLetteredAt = string.format('%d', math.floor(startedUs / 1000))

-- The dead-letter names include the requeue names: an entry with none of them is `plain`, and
-- its copy is its own fields table (a fresh reply table) with the metadata appended.
local requeueNames = metadataNames(REQUEUE_METADATA)
local deadLetterNames = metadataNames(DEAD_LETTER_METADATA)

-- The fields of an entry that is not plain, without its metadata-named ones (`names`), in a
-- table reused from entry to entry. Returns the table and the number of values in it.
local ownFieldsList = {}
local function ownFields(fields, names)
  local n = 0
  for i = 1, #fields, 2 do
    local name = fields[i]
    if not names[name] then
      ownFieldsList[n + 1] = name
      ownFieldsList[n + 2] = fields[i + 1]
      n = n + 2
    end
  end
  return ownFieldsList, n
end

-- Capped (deadLetterMaxLen > 0): MAXLEN ~ on every dead-letter write, and the length before the
-- call's first one, so that what the cap drops is counted (see deadLettersDropped). Uncapped: a
-- plain XADD, nothing more per entry.
local deadLetterMaxLen = arg.deadLetterMaxLen
local capped = tonumber(deadLetterMaxLen) > 0
local deadLettersBefore = nil -- read before the call's first dead letter, when capped
