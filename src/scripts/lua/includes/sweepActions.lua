-- sweepPage.lua's actions: each handles one claimed entry completely (written and acknowledged,
-- handed off, or put back), and counts it. `entry` is the entry's XPENDING line from before the
-- claim: id, owner, idle time, deliveries. `fields`: the values of the copy's own fields (the
-- entry's, without its metadata-named ones), `n` of them; the metadata is appended after them.
-- `forget`: the record of the entry in the carried counts, to remove once it is acknowledged
-- (nil: none).
-- Uses, declared by sweepPage.lua before it: call, unpack, source, group, target, deadLetters,
-- originalStream, result, the tallies (acks, records, forgotten, the id lists and their counts);
-- touch, pickConsumer (sweepConsumers); countTexts, countText (sweepCounts); padded,
-- recordCopies (sweepCarried); the metadata positions, capped, deadLettersBefore
-- (sweepCopies); indexing, indexDeadLetter (sweepIndex).

-- Puts an entry back where it was: same owner, same idle time, same delivery count.
local function restore(entry)
  redis.call('XCLAIM', source, group, entry[2], 0, entry[1], 'IDLE', entry[3],
    'RETRYCOUNT', entry[4], 'JUSTID')
  touch(entry[2])
end

-- Requeue (into the source, its requeueStream, or its retry lane): the copy carries the
-- original's id and every delivery so far, and is recorded in the carried counts when they are
-- kept; the original is acknowledged.
local function requeue(id, fields, n, originalId, deliveries, forget)
  local count = countTexts[deliveries] or countText(deliveries)
  local at = n + REQUEUED_ORIGINAL_ID
  fields[at], fields[at + 1] = 'x-original-id', originalId
  at = n + REQUEUED_DELIVERY_COUNT
  fields[at], fields[at + 1] = 'x-delivery-count', count
  local copy = call('XADD', target, '*', unpack(fields, 1, n + requeueMetadataLength))
  ackCount = ackCount + 1
  acks[ackCount] = id
  if recordCopies then
    records[recordCount + 1] = 0
    records[recordCount + 2] = padded(copy) .. ':' .. count
    recordCount = recordCount + 2
  end
  if forget then
    forgottenCount = forgottenCount + 1
    forgotten[forgottenCount] = forget
  end
  requeuedCount = requeuedCount + 1
  if requeuedCount <= MAX_REPORTED_IDS then requeuedIds[requeuedCount] = id end
end

-- The counter of each reason's dead letters in `result`.
local DEAD_LETTER_TALLIES = {
  ['max-deliveries'] = 'deadLetteredMaxDeliveries', ['max-idle'] = 'deadLetteredMaxIdle',
  ['action'] = 'deadLetteredAction',
}

-- Dead-letter, for `reason`: the dead letter names where the entry came from, why, when and who
-- held it last, and gets its index entry; the original is acknowledged.
local function deadLetter(id, fields, n, entry, originalId, deliveries, reason, forget)
  local at = n + DEAD_ORIGINAL_ID
  fields[at], fields[at + 1] = 'x-original-id', originalId
  at = n + DEAD_ORIGINAL_STREAM
  fields[at], fields[at + 1] = 'x-original-stream', originalStream
  at = n + DEAD_ORIGINAL_GROUP
  fields[at], fields[at + 1] = 'x-original-group', group
  at = n + DEAD_DELIVERY_COUNT
  fields[at], fields[at + 1] = 'x-delivery-count', countTexts[deliveries] or countText(deliveries)
  at = n + DEAD_REASON
  fields[at], fields[at + 1] = 'x-dead-letter-reason', reason
  at = n + DEAD_AT
  fields[at], fields[at + 1] = 'x-dead-lettered-at', deadLetteredAt
  at = n + DEAD_LAST_CONSUMER
  fields[at], fields[at + 1] = 'x-last-consumer', entry[2]
  local length = n + deadLetterMetadataLength
  local written
  if capped then
    if not deadLettersBefore then deadLettersBefore = call('XLEN', deadLetters) end
    written = call('XADD', deadLetters, 'MAXLEN', '~', deadLetterMaxLen, '*', unpack(fields, 1, length))
  else
    written = call('XADD', deadLetters, '*', unpack(fields, 1, length))
  end
  if indexing then indexDeadLetter(written, fields, n + 1, deadLetterMetadataLength) end
  ackCount = ackCount + 1
  acks[ackCount] = id
  if forget then
    forgottenCount = forgottenCount + 1
    forgotten[forgottenCount] = forget
  end
  if deadLetteredIdCount < MAX_REPORTED_IDS then
    deadLetteredIdCount = deadLetteredIdCount + 1
    deadLetteredIds[deadLetteredIdCount] = id
  end
  local tally = DEAD_LETTER_TALLIES[reason]
  result[tally] = result[tally] + 1
end

-- Reassign: the entry is handed to the next live consumer (the janitor's claim raised its count
-- by one: that increment is the hand-off's delivery), or put back when there is none.
local function reassign(id, entry)
  local consumer = pickConsumer(entry[2])
  if not consumer then
    restore(entry)
    result.leftPending = result.leftPending + 1
    return
  end
  redis.call('XCLAIM', source, group, consumer, 0, id, 'JUSTID')
  touch(consumer)
  result.reassigned = result.reassigned + 1
  if reassignedIdCount < MAX_REPORTED_IDS then
    reassignedIdCount = reassignedIdCount + 1
    reassignedIds[reassignedIdCount] = id
  end
end

-- Dead letters the cap removed during the call: XLEN before its first dead letter, plus the
-- dead letters written, minus XLEN now. Exact: nothing else runs meanwhile.
local function deadLettersDropped()
  if not deadLettersBefore then return 0 end
  return deadLettersBefore + result.deadLetteredMaxDeliveries + result.deadLetteredAction +
    result.deadLetteredMaxIdle - redis.call('XLEN', deadLetters)
end
