-- The metadata fields of the copies the scripts write (src/core/copyMetadata.ts holds the same
-- lists, checked equal by test/scripts/sharedConstants.test.ts), in the order they are written.
-- A requeued copy: the original's id, and the deliveries so far.
local REQUEUE_METADATA = { 'x-original-id', 'x-delivery-count' }
-- A dead letter: where it came from, why, when, and who held it last.
local DEAD_LETTER_METADATA = {
  'x-original-id', 'x-original-stream', 'x-original-group', 'x-delivery-count',
  'x-dead-letter-reason', 'x-dead-lettered-at', 'x-last-consumer',
}
-- x-dead-letter-reason: every reason sweepPage.lua writes (DEAD_LETTER_REASONS in
-- src/core/copyMetadata.ts, the list the --reason options accept).
local DEAD_LETTER_REASONS = { 'max-deliveries', 'action', 'max-idle' }
-- Added to a redriven copy (with x-original-id, and x-delivery-count 0).
local REDRIVE_METADATA = { 'x-redrive-count', 'x-redriven-at' }

-- The names of `lists` as a set: a field named so is metadata, wherever it stands.
local function metadataNames(...)
  local names = {}
  for _, list in ipairs({ ... }) do
    for _, name in ipairs(list) do names[name] = true end
  end
  return names
end
