-- The move of a page of dead letters back to a target, shared by redriveDeadLetters.lua (an
-- operator's redrive) and redriveTaskBatch.lua (a batch of a redrive task): the checks that could
-- make a write fail (key types, the target's ids), then per dead letter of this stream/group (and
-- reason) a copy with its original fields byte for byte and in order, then the deletes.
--- @include "streamIds"
--- @include "metadata"
--- @include "deadLetterReaders"

-- nil, exists (by key) when every key is a stream or absent; else the WRONGTYPE message.
local function streamKeyTypes(keys)
  local exists = {}
  for _, key in ipairs(keys) do
    local keyType = redis.call('TYPE', key)['ok']
    if keyType ~= 'stream' and keyType ~= 'none' then
      return 'WRONGTYPE ' .. key .. ' holds a ' .. keyType .. ', not a stream', exists
    end
    exists[key] = keyType == 'stream'
  end
  return nil, exists
end

-- A stream whose last id has the largest millisecond part can take only as many more entries as
-- its sequence part allows (idsLeftFor: includes/streamIds.lua). nil when it can, else the
-- IDSEXHAUSTED message.
local function idsRefusal(exists, key, count)
  if not exists[key] then return nil end
  local info = redis.call('XINFO', 'STREAM', key)
  local last = nil
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then last = info[i + 1] end
  end
  if idsLeftFor(last, count) then return nil end
  return 'IDSEXHAUSTED stream ' .. key .. ' has used up its ids (last id ' .. last ..
    '): XADD would fail; nothing was redriven'
end

local REDRIVE_METADATA_NAMES = metadataNames(DEAD_LETTER_METADATA, REDRIVE_METADATA)
-- redis.call passes its arguments on the Lua C stack, which holds about 8000 values.
local REDRIVE_MAX_FIELD_VALUES = 7900

-- The copy of one dead letter: its fields but the metadata, then a requeued copy's metadata.
local function redriveCopy(target, id, fields, meta, nowMs)
  local args = { 'XADD', target, '*' }
  local n = 3
  for i = 1, #fields, 2 do
    if not REDRIVE_METADATA_NAMES[fields[i]] then
      args[n + 1] = fields[i]
      args[n + 2] = fields[i + 1]
      n = n + 2
    end
  end
  n = appendRedriveMetadata(args, n, meta, id, nowMs)
  return redis.pcall(unpack(args, 1, n))
end

-- Moves (or, dry, counts) the selected dead letters of `page`, at most m.moveLimit, then deletes
-- the moved ones from m.deadLetters and m.index. m: deadLetters, index, target, source, group,
-- reason ('' for any), moveLimit, dryRun, byIds, readers, nowMs. Returns a table: examined,
-- moved, held, nextCursor (on a failure: the id before the one that failed), oversized, unknown,
-- deleted, failure (an XADD error, after the deletes).
local function redriveMove(page, m)
  local r = { examined = 0, moved = 0, held = 0, nextCursor = m.cursor, oversized = {},
    unknown = {}, deleted = 0 }
  local toDelete = {}
  for _, entry in ipairs(page) do
    if r.moved >= m.moveLimit then break end
    local id, fields = entry[1], entry[2] or {}
    local previous = r.nextCursor
    r.examined = r.examined + 1
    r.nextCursor = id
    local meta = {}
    for i = 1, #fields, 2 do
      if REDRIVE_METADATA_NAMES[fields[i]] then meta[fields[i]] = fields[i + 1] end
    end
    local selected = meta['x-original-stream'] == m.source and meta['x-original-group'] == m.group
      and (m.reason == '' or meta['x-dead-letter-reason'] == m.reason)
    if not selected then
      if m.byIds then r.unknown[#r.unknown + 1] = id end
    elseif heldBackFrom(m.deadLetters, m.readers, id) then
      r.held = r.held + 1
    elseif #fields + 8 > REDRIVE_MAX_FIELD_VALUES then
      r.oversized[#r.oversized + 1] = id
    else
      r.moved = r.moved + 1
      if not m.dryRun then
        local copied = redriveCopy(m.target, id, fields, meta, m.nowMs)
        if type(copied) == 'table' and copied.err then
          r.failure = copied.err
          r.moved = r.moved - 1
          r.nextCursor = previous
          break
        end
        toDelete[#toDelete + 1] = id
      end
    end
  end
  for first = 1, #toDelete, 1000 do
    local last = math.min(first + 999, #toDelete)
    redis.call('XDEL', m.deadLetters, unpack(toDelete, first, last))
    redis.call('XDEL', m.index, unpack(toDelete, first, last))
  end
  r.deleted = #toDelete
  return r
end
