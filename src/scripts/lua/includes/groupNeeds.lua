--- @include "streamIds"
-- The safe-trim rule: what the consumer groups of a stream still need. A group needs everything
-- from the smaller of its oldest pending id (XPENDING summary) and the first id after its
-- last-delivered-id; whatever comes before was delivered to it and acknowledged. Returns the
-- floor (the smallest such id of all groups, nil when the stream has no group) and the list of
-- { group, neededFromId, info } (info: the group's XINFO GROUPS fields by name). Read-only; no
-- entry body is read.
local function groupNeeds(stream)
  local floor = nil
  local needs = {}
  for _, flat in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local info = {}
    for i = 1, #flat, 2 do info[flat[i]] = flat[i + 1] end
    local neededFrom = nextId(info['last-delivered-id'])
    if info['pending'] > 0 then
      local oldestPending = redis.call('XPENDING', stream, info['name'])[2]
      if oldestPending and idLess(oldestPending, neededFrom) then neededFrom = oldestPending end
    end
    needs[#needs + 1] = { info['name'], neededFrom, info }
    if floor == nil or idLess(neededFrom, floor) then floor = neededFrom end
  end
  return floor, needs
end
