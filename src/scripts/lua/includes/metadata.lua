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

-- Appends a redriven copy's metadata to the XADD arguments `args` (its first `n` filled): the
-- original's id (kept from an earlier redrive), deliveries back to 0, the redrive count one up,
-- and the time. An x-redrive-count is trusted only as a canonical non-negative integer, like
-- x-delivery-count. Returns the new length of `args`.
local function appendRedriveMetadata(args, n, meta, id, now)
  local previous = meta['x-redrive-count']
  local redrives = 0
  if previous and string.match(previous, '^%d+$') and #previous < 16 then
    redrives = tonumber(previous)
  end
  args[n + 1] = 'x-original-id'
  args[n + 2] = meta['x-original-id'] or id
  args[n + 3] = 'x-delivery-count'
  args[n + 4] = '0'
  args[n + 5] = 'x-redrive-count'
  args[n + 6] = tostring(redrives + 1)
  args[n + 7] = 'x-redriven-at'
  args[n + 8] = now
  return n + 8
end
