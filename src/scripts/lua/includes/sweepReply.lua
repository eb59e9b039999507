-- sweepPage.lua's reply: what the call did, as the flat name/value list its header describes.
-- Uses, declared by sweepPage.lua before it: result, the tallies and id lists, cursor, failure,
-- startedUs, nowUs; handedOff (sweepConsumers); indexing, trimIndexAfterCap (sweepIndex);
-- deadLettersDropped (sweepActions).

-- Also trims the dead-letter indexes when the cap dropped dead letters (after every write).
local function sweepReply()
  result.claimed, result.requeued = claimedCount, requeuedCount
  result.claimedFromActiveConsumer = fromActiveCount
  result.deadLettersDropped = deadLettersDropped()
  trimIndexAfterCap(result.deadLettersDropped)
  result.deadLetterIndexed = indexing and 1 or 0
  local reply = {
    'cursor', cursor, 'handedOff', handedOff, 'durationUs', nowUs() - startedUs,
    'ghosts', ghosts, 'oversized', oversized, 'invalidCountIds', invalidCountIds,
    'requeuedIds', requeuedIds, 'reassignedIds', reassignedIds, 'deadLetteredIds', deadLetteredIds,
  }
  for name, value in pairs(result) do
    reply[#reply + 1] = name
    reply[#reply + 1] = value
  end
  if failure then
    reply[#reply + 1] = 'error'
    reply[#reply + 1] = failure
  end
  return reply
end
