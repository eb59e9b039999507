-- sweepPage.lua's dead-letter index (src/core/deadLetterIndex.ts): kept only once complete (until
-- then indexDeadLetters.lua builds it from the dead-letter stream, and writing here would leave
-- gaps below its cursor). Dead letters that deadLetterMaxLen dropped, whichever group's write did
-- it, leave the index too.
-- Uses, declared by sweepPage.lua before it: deadLetters, indexKey, indexStateKey, indexFloorKey,
-- exists (the keys found), unpack.

-- Whether the index is complete and kept; marks it complete when no dead letter was ever
-- written (once per group), and drops what the cap dropped since the last call.
local function openIndex()
  local complete = redis.call('HGET', indexStateKey, 'complete') == '1'
  if not complete and (not exists[deadLetters] or redis.call('XLEN', deadLetters) == 0) then
    -- No dead letter written before the index: it is complete from the start.
    redis.call('DEL', indexKey, indexStateKey)
    redis.call('HSET', indexStateKey, 'complete', '1')
    complete = true
  end
  if complete then
    local floor = redis.call('GET', indexFloorKey)
    if floor then redis.call('XTRIM', indexKey, 'MINID', floor) end
  end
  return complete
end
local indexing = openIndex()

-- The index entry of the dead letter `id`: its metadata pairs (`length` values of `list` from
-- `first` on), at the dead letter's own id. Index ids come only from the dead-letter stream, in its order, so the
-- XADD cannot fail but for a hand-made change (the dead-letter stream deleted and recreated with
-- lower ids): then the index is dropped, to be built again (indexDeadLetters.lua), rather than
-- left short; the dead letter stands either way.
local function indexDeadLetter(id, list, first, length)
  local added = redis.pcall('XADD', indexKey, id, unpack(list, first, first + length - 1))
  if type(added) == 'table' and added.err then
    redis.call('DEL', indexKey, indexStateKey)
    indexing = false
  end
end

-- After the call's writes, when the cap dropped dead letters (`dropped` > 0): every index of the
-- stream loses what is below the stream's first id now (one entry read).
local function trimIndexAfterCap(dropped)
  if dropped <= 0 then return end
  local first = redis.call('XRANGE', deadLetters, '-', '+', 'COUNT', 1)[1]
  if first then
    redis.call('SET', indexFloorKey, first[1])
    if indexing then redis.call('XTRIM', indexKey, 'MINID', first[1]) end
  end
end
