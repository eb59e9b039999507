-- Readers: the consumer groups of a dead-letter stream itself, for purgeDeadLetters.lua and
-- redriveDeadLetters.lua. As safeTrim.lua does for a stream's groups, a dead letter a group has
-- not been delivered yet (after its last-delivered-id) or still holds pending is never removed:
-- its readers would find it gone (a ghost in their PEL, or an entry never seen). Per entry rather
-- than as a floor, since XDEL removes entries anywhere in the stream.
--- @include "streamIds"

-- The groups of `stream` (nil: it does not exist), each with what it was delivered and its PEL.
local function readersOf(stream)
  local readers = {}
  if not stream then return readers end
  for _, flat in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local info = {}
    for i = 1, #flat, 2 do info[flat[i]] = flat[i + 1] end
    local reader = { name = info['name'], lastDelivered = info['last-delivered-id'], held = 0 }
    if info['pending'] > 0 then
      local summary = redis.call('XPENDING', stream, reader.name)
      reader.firstPending, reader.lastPending = summary[2], summary[3]
    end
    readers[#readers + 1] = reader
  end
  return readers
end

-- True when some reader of `stream` still needs the dead letter `id`; counted for each one that
-- does. Ids are compared as decimal strings (idLess).
local function heldBackFrom(stream, readers, id)
  local held = false
  for _, reader in ipairs(readers) do
    local needs = idLess(reader.lastDelivered, id)
    if not needs and reader.firstPending and not idLess(id, reader.firstPending)
      and not idLess(reader.lastPending, id) then
      needs = #redis.call('XPENDING', stream, reader.name, id, id, 1) > 0
    end
    if needs then
      reader.held = reader.held + 1
      held = true
    end
  end
  return held
end

-- Flat { group, entries, ... }: the readers that held dead letters back, with how many each.
local function heldBackByOf(readers)
  local heldBackBy = {}
  for _, reader in ipairs(readers) do
    if reader.held > 0 then
      heldBackBy[#heldBackBy + 1] = reader.name
      heldBackBy[#heldBackBy + 1] = reader.held
    end
  end
  return heldBackBy
end
