-- sweepPage.lua's copies (requeued copies and dead letters): the original fields first, byte for
-- byte and in order, then the metadata (includes/metadata.lua: the names and their order). A
-- field of the original named like a metadata field is dropped from its place (the metadata
-- carries its new value), so a copy of a copy keeps the user's fields in front.
-- Uses, declared by sweepPage.lua before it: call, unpack, target, deadLetters, originalStream,
-- group, startedUs, arg, deadLetters.

-- redis.call passes its arguments on the Lua C stack, which holds about 8000 values.
local maxFieldValues = 7900

-- A copy's metadata as name/value pairs in the order of `names`, with the values of `fixed` (the
-- same for every copy of the call), and where each value stands in it, by name: an entry's own
-- values are set there, the rest is never touched again.
local function metadataTemplate(names, fixed)
  local list, valueAt = {}, {}
  for i, name in ipairs(names) do
    list[2 * i - 1] = name
    list[2 * i] = fixed[name] or ''
    valueAt[name] = 2 * i
  end
  return list, valueAt, #list
end

local requeueMetadata, requeueValueAt, requeueMetadataLength = metadataTemplate(REQUEUE_METADATA, {})
local deadLetterMetadata, deadLetterValueAt, deadLetterMetadataLength =
  metadataTemplate(DEAD_LETTER_METADATA, {
    ['x-original-stream'] = originalStream,
    ['x-original-group'] = group,
    ['x-dead-lettered-at'] = string.format('%d', math.floor(startedUs / 1000)),
  })
-- The values each copy sets, by name (positions read once per call, kept as locals).
local REQUEUED_ORIGINAL_ID = requeueValueAt['x-original-id']
local REQUEUED_DELIVERY_COUNT = requeueValueAt['x-delivery-count']
local DEAD_ORIGINAL_ID = deadLetterValueAt['x-original-id']
local DEAD_DELIVERY_COUNT = deadLetterValueAt['x-delivery-count']
local DEAD_REASON = deadLetterValueAt['x-dead-letter-reason']
local DEAD_LAST_CONSUMER = deadLetterValueAt['x-last-consumer']

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
