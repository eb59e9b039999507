-- The page of dead letters a purgeDeadLetters.lua or redriveDeadLetters.lua call looks at: the
-- ids given from ARGV[firstId] on (each once, in order), or else the range of the dead-letter
-- stream after `cursor` up to `endId`, at most `scanLimit` entries. A given id that is not in the
-- stream stays in the page without fields ({ id, false }), so that unknown ids are listed in order.
-- Returns the page and whether it was given by ids.
local function deadLetterPage(deadLetters, cursor, endId, scanLimit, firstId)
  if #ARGV < firstId then
    return redis.call('XRANGE', deadLetters, '(' .. cursor, endId, 'COUNT', scanLimit), false
  end
  local page, seen = {}, {}
  for i = firstId, #ARGV do
    local id = ARGV[i]
    if not seen[id] then
      seen[id] = true
      page[#page + 1] = redis.call('XRANGE', deadLetters, id, id)[1] or { id, false }
    end
  end
  return page, true
end
