#!lua flags=
--[[
sweepPage: one call of a sweep of one stream/group pair, atomically.

Reads windows of the PEL from the cursor (XPENDING: owner, idle time and delivery count of each
entry), claims the due entries of each window with XAUTOCLAIM (whose deleted ids are the
ghosts), then re-dispatches or dead-letters each claimed entry, and goes on with the next window
while the call's time budget allows. Due: idle past the claim threshold, or passed (delivered
more than maxDeliveries times, by its XPENDING count) whatever its idle time. Requeue and
dead-letter claim with XAUTOCLAIM JUSTID and read the bodies of claimed entries that are next to
each other in the stream with one XRANGE (see "Bodies in one sequential read"). Running it again after a crash writes nothing twice: what
was acknowledged is no longer pending, what was handed off is not idle any more (nor passed: only
an entry below maxDeliveries is handed off), what was put back was not written.

The shebang with no flags declares the script as writing: Redis refuses it with OOM before it
starts, instead of failing a write half-way, and only the declared keys may be touched. Every
other condition that could make a write fail is checked before the first write (see "Checks").
Should an unforeseen error still happen, the entries already copied are acknowledged and every
other claimed entry is put back to its owner: each entry is fully handled or untouched.

KEYS[1]  source stream
KEYS[2]  requeue target stream (the source itself by default)
KEYS[3]  dead-letter stream
KEYS[4]  touches hash: consumer -> Unix ms of the janitor's last XCLAIM to it (for reassign)
KEYS[5]  optional fence key (src/sweep/slotFence.ts). One server: the lease key, which must hold
         ARGV fence or nothing changes. Redis Cluster (fence is 'token:<n>'): a key in the
         source's slot holding the highest fencing token that wrote here; a lower n changes
         nothing, a higher one is stored before the first write
KEYS[last 5], KEYS[last 4]  carried counts of KEYS[1] and of KEYS[2] for this group (a sorted
         set each, see "Carried counts"; the same key when the copies go to the source)
KEYS[last 3]  the group's dead-letter index, its state hash and the dead-letter stream's index
         floor (src/core/deadLetterIndex.ts): once the state says complete, each dead letter
         written gets an index entry at its own id with its x-* fields and no body, and the index
         is trimmed below the floor (what deadLetterMaxLen dropped, for any group of the stream)

ARGV     name/value pairs, built by sweepPageArgs() in src/scripts/sweepPage.ts:
  group, consumer    the group, and the janitor's own consumer (it owns claimed entries only
                     inside this call)
  minIdleMs          only entries idle at least this long are claimed (passed ones aside)
  cursor             first PEL id to look at (inclusive); 0-0 to start
  maxClaimed         at most this many entries are claimed by this call (<= 10000)
  maxExamined        at most this many PEL entries are looked at by this call
  firstWindow        size of the first window (later ones follow the cost seen so far)
  budgetUs           no new window is started once this much time was spent
  maxDeliveries      dead-letter once the deliveries reach it; an entry whose XPENDING count
                     passed it is claimed (and dead-lettered) whatever its idle time
  action             requeue | reassign | dead-letter
  deadLetterMaxLen   MAXLEN ~ cap of the dead-letter stream; 0: never trimmed
  fence              the value KEYS[5] must hold, or 'token:<n>' on Cluster
  rotation           round-robin offset among the live reassign candidates
  backoffMs          claim thresholds by delivery count, comma-separated, each already raised
                     to minIdleMs (includes/backoff.lua); equal to minIdleMs: no backoff
  backoffJitter      per-entry spread of each threshold, in thousandths (0..500)
  originalStream     optional, when KEYS[1] is a group's retry lane: the source stream, named by
                     x-original-stream in dead letters (default: KEYS[1])
  deadLetterAfterIdleMs  > 0: a claimed entry idle at least this long is dead-lettered
                     (reason max-idle), whatever the action; 0: off

Returns a flat name/value list, parsed by parseSweepPageReply():
  cursor, examined, claimed, requeued, reassigned, deadLetteredMaxDeliveries,
  deadLetteredAction, deadLetteredMaxIdle, leftPending, handedOff (rotation advance), windows,
  durationUs, claimUs (of durationUs, the time spent claiming and handling entries, not reading
  the PEL), claimedFromActiveConsumer (claimed entries whose owner read from the group within
  minIdleMs: a sign that minIdleMs is shorter than the work), ghosts (ids), oversized (ids),
  invalidCountIds (first MAX_REPORTED_IDS ids), invalidCounts (total), requeuedIds,
  reassignedIds, deadLetteredIds (for every reason): the first MAX_REPORTED_IDS ids of the
  entries each action handled in this call, in PEL order, as pending in KEYS[1] (a requeue's
  claimed id, not its copy's),
  deadLettersDropped (dead letters the cap removed during this call: XLEN before the call's
  dead-letter writes, plus the writes, minus XLEN after; exact, as nothing else runs meanwhile),
  deadLetterIndexed (1: the index was complete and kept so; 0: it still needs building,
  indexDeadLetters.lua),
  and error (only after an unforeseen error: what was done is counted, nothing else changed)
Errors, nothing changed (listed as SWEEP_PAGE_ERRORS in src/scripts/sweepPage.ts):
  FENCED, NOSTREAM, WRONGTYPE, NOGROUP, IDSEXHAUSTED, CONSUMERBUSY

Included when loaded (src/scripts/scriptedRedis.ts): includes/fence.lua, streamIds.lua,
metadata.lua, limits.lua, backoff.lua. Their code runs once per call, never per entry.

Bodies stay inside Redis: Lua strings are byte strings, so fields are copied exactly, in order.
Ids are never turned into numbers (doubles lose precision above 2^53) nor stepped: each window
is read with one entry of look-ahead, whose id is the next cursor.
]]

--- @include "fence"
--- @include "streamIds"
--- @include "metadata"
--- @include "limits"
--- @include "backoff"

local source, target, deadLetters, touchesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local indexKey, indexStateKey, indexFloorKey = KEYS[#KEYS - 2], KEYS[#KEYS - 1], KEYS[#KEYS]
local carriedKey, targetCarriedKey = KEYS[#KEYS - 4], KEYS[#KEYS - 3]
-- Called once per entry: as upvalues rather than global lookups.
local call, unpack = redis.call, unpack
local arg = {}
for i = 1, #ARGV, 2 do arg[ARGV[i]] = ARGV[i + 1] end
local group, janitor, action = arg.group, arg.consumer, arg.action
-- Retry lane (ARGV originalStream): dead letters name the group's source stream, not the lane.
local originalStream = arg.originalStream or source
local minIdle = tonumber(arg.minIdleMs)
local maxClaimed = tonumber(arg.maxClaimed)
local maxExamined = tonumber(arg.maxExamined)
local firstWindow = tonumber(arg.firstWindow)
local budgetUs = tonumber(arg.budgetUs)
local maxDeliveries = tonumber(arg.maxDeliveries)
local rotation = tonumber(arg.rotation)
-- Backoff (includes/backoff.lua): an entry is due once idle past its own threshold, by delivery
-- count and jittered by id; XAUTOCLAIM is given the lowest threshold as min-idle (`claimIdle`).
-- Not configured: every threshold is minIdle and nothing is computed per entry.
local spread = tonumber(arg.backoffJitter or '0')
local tiers, tierCount, claimIdle, alwaysDue = parseTiers(arg.backoffMs or '', spread)
local backoff = spread > 0 or tierCount > 1 or (tierCount == 1 and tiers[1] ~= minIdle)
if not backoff then claimIdle = minIdle end
-- nil when off (the default), so that the per-entry test is one local read.
local deadLetterAfterIdle = tonumber(arg.deadLetterAfterIdleMs)
if deadLetterAfterIdle == 0 then deadLetterAfterIdle = nil end
-- An entry idle past deadLetterAfterIdleMs is due whatever its backoff tier: it is dead-lettered
-- (src/core/backoffThreshold.ts mirrors this for the due-entries gauge).
if backoff and deadLetterAfterIdle and deadLetterAfterIdle < alwaysDue then
  alwaysDue = math.max(deadLetterAfterIdle, claimIdle)
end

local function nowUs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local startedUs = nowUs()

------------------------------------------------------------------------------------------------
-- Checks: everything that could make a write fail, before the first write.

-- A refusal: its code first, as listed above.
local function refuse(code, message)
  return redis.error_reply(code .. ' ' .. message)
end

-- The fence (includes/fence.lua); on Cluster it is raised just before the first write (below).
local fenceToken = nil
if #KEYS >= 10 then
  local fenced
  fenced, fenceToken = checkFence(KEYS[5], arg.fence, 'has swept this stream')
  if fenced then return refuse('FENCED', fenced) end
end

local exists = {} -- key -> true, for the keys found of the wanted type
local function checkType(key, wanted, mayBeMissing)
  local keyType = redis.call('TYPE', key)['ok']
  if keyType == wanted then exists[key] = true end
  if keyType == wanted or (mayBeMissing and keyType == 'none') then return nil end
  if keyType == 'none' then return refuse('NOSTREAM', 'no such stream: ' .. key) end
  return refuse('WRONGTYPE', key .. ' holds a ' .. keyType .. ', not a ' .. wanted)
end
local refusal = checkType(source, 'stream', false)
  or checkType(target, 'stream', true)
  or checkType(deadLetters, 'stream', true)
  or checkType(touchesKey, 'hash', true)
  or checkType(indexKey, 'stream', true)
  or checkType(indexStateKey, 'hash', true)
  or checkType(indexFloorKey, 'string', true)
  or checkType(carriedKey, 'zset', true)
  or checkType(targetCarriedKey, 'zset', true)
if refusal then return refusal end

-- Also the group check (NOGROUP): entries held by a consumer of the janitor's name were not put
-- there by the janitor, which owns entries only inside this call.
local held = redis.pcall('XPENDING', source, group, '-', '+', 1, janitor)
if held.err then return redis.error_reply(held.err) end
if #held > 0 then
  return refuse('CONSUMERBUSY', 'consumer ' .. janitor .. ' of group ' .. group ..
    ' holds entries the janitor did not put there (' .. held[1][1] .. '...); rename sweep.consumerName')
end

-- A stream whose ids are used up cannot take the copies (idsLeftFor, includes/streamIds.lua).
-- Ids run out only at the top millisecond: the stream's last entry there, if any (one entry
-- read, and only then). Not XINFO STREAM: it returns the first and last entries whole, 175 ms
-- inside a script for two of 5 MB. A last id moved to the top by XSETID, or whose entries there
-- were deleted, is not seen: XADD then fails, an unforeseen error (each entry handled or put back).
local function topId(key)
  if not exists[key] then return nil end
  local top = redis.call('XREVRANGE', key, '+', MAX_ID_PART .. '-0', 'COUNT', 1)[1]
  return top and top[1]
end
local function canTake(key, count)
  local last = topId(key)
  return not last or idsLeftFor(last, count) -- count <= 10000
end
local writeTargets = { deadLetters }
if action == 'requeue' then writeTargets[2] = target end
for _, key in ipairs(writeTargets) do
  if not canTake(key, maxClaimed) then
    return refuse('IDSEXHAUSTED', 'stream ' .. key .. ' has used up its ids (last id ' ..
      topId(key) .. '): XADD would fail; nothing was claimed')
  end
end

-- Checks passed. Raised even when this page finds nothing to do: the stream has been swept under
-- this token, and a leader with a lower one must not write here any more.
if fenceToken then redis.call('SET', KEYS[5], fenceToken) end

-- The dead-letter index: kept only once complete (until then indexDeadLetters.lua builds it from
-- the dead-letter stream, and writing here would leave gaps below its cursor). Dead letters that
-- deadLetterMaxLen dropped, whichever group's write did it, leave the index too.
local indexing = redis.call('HGET', indexStateKey, 'complete') == '1'
if not indexing and (not exists[deadLetters] or redis.call('XLEN', deadLetters) == 0) then
  -- No dead letter written before the index: it is complete from the start (once per group).
  redis.call('DEL', indexKey, indexStateKey)
  redis.call('HSET', indexStateKey, 'complete', '1')
  indexing = true
end
if indexing then
  local floor = redis.call('GET', indexFloorKey)
  if floor then redis.call('XTRIM', indexKey, 'MINID', floor) end
end

-- Carried counts. Backoff needs the deliveries a requeued copy carries (x-delivery-count), which
-- sit in its body with the user's fields: reading a 5 MB body costs about 35 ms. So the script
-- that writes a copy also records its id and count in a sorted set of the stream it goes to and
-- of this group, and the backoff test looks the count up there, no body read. All scores are 0;
-- members are ordered by their text: `<ms>-<seq>:<count>`, both parts of the id zero-padded to 20
-- digits, so text order is id order. The watermark `from:<id>` (after every padded id) is the
-- last id of the millisecond the set was started in (Redis TIME): every copy above it has its
-- record, so an entry above it without one is no copy of this janitor (an original, a redriven
-- copy: 0); one below it (written before counts were kept) is read once and recorded. (The
-- stream's last id would be exact, but only XINFO STREAM tells it, with two entries whole; an
-- entry above `now`, written with an explicit id, is taken for new.) The set is started by a call
-- with backoff configured; once it exists every copy written here is recorded, backoff or not, so
-- that it never says 0 for a copy. Records leave it when the sweep acknowledges their copy, and
-- below the group's oldest pending entry at the start of each pass (what is below was
-- acknowledged).
local WATERMARK = 'from:'
local function padded(id)
  local dash = string.find(id, '-', 1, true)
  return string.rep('0', 21 - dash) .. string.sub(id, 1, dash - 1) .. '-' ..
    string.rep('0', 20 - #id + dash) .. string.sub(id, dash + 1)
end
if backoff and redis.call('EXISTS', carriedKey) == 0 then
  local nowMs = string.format('%d', math.floor(startedUs / 1000))
  redis.call('ZADD', carriedKey, 0, WATERMARK .. padded(nowMs .. '-' .. MAX_ID_PART))
end
local carriedKept = backoff or redis.call('EXISTS', carriedKey) == 1
local carriedFrom = nil -- the watermark, padded; nil: none, every entry counts as written before
if backoff then
  local found = redis.call('ZRANGEBYLEX', carriedKey, '[' .. WATERMARK, '+', 'LIMIT', 0, 1)[1]
  carriedFrom = found and string.sub(found, #WATERMARK + 1)
end
local recordCopies = action == 'requeue' and (targetCarriedKey == carriedKey and carriedKept
  or targetCarriedKey ~= carriedKey and redis.call('EXISTS', targetCarriedKey) == 1)

------------------------------------------------------------------------------------------------
-- Reassign: live candidates. Seen is XINFO CONSUMERS `idle`, the time since the consumer's last
-- attempted read, on every version; not `inactive` (7.2+), which counts from its last successful
-- read and is -1 for a consumer that polls but has never received an entry, though it may be
-- blocked in XREADGROUP right now. An XCLAIM to a consumer resets its idle time too (7.0 and
-- 7.2+ alike), so the janitor's own claims must not pass for a sign of life: a consumer counts as
-- live only if it was seen within minIdle AND after the janitor last touched it.

local touched, touchedCount = {}, 0
local function touch(consumer)
  if not touched[consumer] then
    touched[consumer] = true
    touchedCount = touchedCount + 1
  end
end

-- The live consumers, most recently seen first, as { name, idle } pairs. Read before this call
-- touches any consumer (the reassign candidates, and activeOwners below).
local function liveConsumers()
  local nowMs = math.floor(startedUs / 1000)
  local lastTouch = {}
  local flat = redis.call('HGETALL', touchesKey)
  for i = 1, #flat, 2 do lastTouch[flat[i]] = tonumber(flat[i + 1]) end
  local live = {}
  for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', source, group)) do
    local info = {}
    for i = 1, #consumer, 2 do info[consumer[i]] = consumer[i + 1] end
    local idle = info['idle']
    if idle < minIdle and info['name'] ~= janitor then
      local since = lastTouch[info['name']]
      if not since or nowMs - idle > since + 1 then
        live[#live + 1] = { info['name'], idle }
      end
    end
  end
  table.sort(live, function(a, b) return a[2] < b[2] end)
  return live
end

-- Owners that read from the group within minIdle (name -> true), or false when none did: an
-- entry claimed from one of them was still being worked on, most likely, so minIdleMs is too
-- low (claimedFromActiveConsumer). nil until the call's first claim is settled: read once per
-- call, and only by calls that claim something.
local activeOwners = nil
local function activeOwnerSet(live)
  local set, any = {}, false
  for _, consumer in ipairs(live) do
    set[consumer[1]] = true
    any = true
  end
  return any and set
end

local candidates = {}
if action == 'reassign' then
  local live = liveConsumers()
  for i, entry in ipairs(live) do candidates[i] = entry[1] end
  activeOwners = activeOwnerSet(live)
end
local handedOff = 0
-- Round robin over the candidates (the rotation carries over between calls), never the owner.
local function pickConsumer(owner)
  local count = #candidates
  for step = 0, count - 1 do
    local candidate = candidates[(rotation + handedOff + step) % count + 1]
    if candidate ~= owner then
      handedOff = handedOff + step + 1
      return candidate
    end
  end
  return nil
end

------------------------------------------------------------------------------------------------
-- Writing copies: the original fields first, byte for byte and in order, then the metadata. A
-- field of the original named like a metadata field is dropped from its place (the metadata
-- carries its new value), so a copy of a copy keeps the user's fields in front.

local nowMsString = string.format('%d', math.floor(startedUs / 1000))
-- redis.call passes its arguments on the Lua C stack, which holds about 8000 values.
local maxFieldValues = 7900

-- The XADD argument lists, reused from entry to entry: a prefix, the fields, the metadata.
local requeueArgs, requeuePrefix = { 'XADD', target, '*' }, 3
local deadLetterMaxLen = arg.deadLetterMaxLen
-- Capped (deadLetterMaxLen > 0): MAXLEN ~ on every dead-letter write, and the length before the
-- first one, so that what the cap drops is counted (see deadLettersDropped). Uncapped: a plain
-- XADD, nothing more per entry.
local capped = tonumber(deadLetterMaxLen) > 0
local deadLettersBefore = capped and redis.call('XLEN', deadLetters) or 0
local deadLetterArgs = { 'XADD', deadLetters, '*' }
local deadLetterPrefix = 3
if capped then
  deadLetterArgs = { 'XADD', deadLetters, 'MAXLEN', '~', deadLetterMaxLen, '*' }
  deadLetterPrefix = 6
end
-- The metadata of a copy (names and order from includes/metadata.lua), as name/value pairs
-- whose values are set per entry: at these positions, written out on the plain paths of handle().
local function metadataOf(names, values)
  local list = {}
  for i, name in ipairs(names) do
    list[2 * i - 1] = name
    list[2 * i] = values[name] or ''
  end
  return list
end
local requeueMetadata = metadataOf(REQUEUE_METADATA, {})
local deadLetterMetadata = metadataOf(DEAD_LETTER_METADATA, {
  ['x-original-stream'] = originalStream, ['x-original-group'] = group, ['x-dead-lettered-at'] = nowMsString,
})
-- The dead-letter names include the requeue names: an entry with none of them is copied as is.
local requeueNames = metadataNames(REQUEUE_METADATA)
local deadLetterNames = metadataNames(DEAD_LETTER_METADATA)

-- The copy of an entry with metadata-named fields: its other fields, then the metadata.
local function writeFiltered(args, prefixLength, metadata, metadataNames, fields)
  local n = prefixLength
  for i = 1, #fields, 2 do
    local name = fields[i]
    if not metadataNames[name] then
      args[n + 1] = name
      args[n + 2] = fields[i + 1]
      n = n + 2
    end
  end
  for i = 1, #metadata do args[n + i] = metadata[i] end
  return call(unpack(args, 1, n + #metadata))
end

-- The index entry of the dead letter `id`: the 14 metadata values from list[first] on (the
-- DEAD_LETTER_METADATA pairs), at the dead letter's own id. Index ids come only from the
-- dead-letter stream, in its order, so the XADD cannot fail but for a hand-made change (the
-- dead-letter stream deleted and recreated with lower ids): then the index is dropped, to be
-- built again (indexDeadLetters.lua), rather than left short; the dead letter stands either way.
local function indexDeadLetter(id, list, first)
  local added = redis.pcall('XADD', indexKey, id, unpack(list, first, first + 13))
  if type(added) == 'table' and added.err then
    redis.call('DEL', indexKey, indexStateKey)
    indexing = false
  end
end

------------------------------------------------------------------------------------------------
-- The windows.

local result = {
  examined = 0, reassigned = 0, deadLetteredMaxDeliveries = 0, deadLetteredAction = 0,
  deadLetteredMaxIdle = 0, leftPending = 0, windows = 0, invalidCounts = 0, claimUs = 0,
}
-- The counters every entry may move, as locals: a field of `result` is a hash lookup.
local claimedCount, requeuedCount, fromActiveCount = 0, 0, 0
-- Lists filled with explicit counts: `#list` is a search in Lua 5.1, not a field read.
local ghosts, ghostCount = {}, 0
local oversized, oversizedCount = {}, 0
local invalidCountIds = {}
-- The first MAX_REPORTED_IDS ids per action: per entry one comparison, and one insert under it.
local requeuedIds = {}
local reassignedIds, reassignedIdCount = {}, 0
local deadLetteredIds, deadLetteredIdCount = {}, 0
local acks, ackCount = {}, 0
-- ZADD arguments (score, member) of the copies written, and the records of acknowledged copies.
local records, recordCount = {}, 0
local forgotten, forgottenCount = {}, 0
local cursor = arg.cursor
local claimedAny = false
local failure = nil
local NONE = {}

-- Puts an entry back where it was: same owner, same idle time, same delivery count.
local function restore(entry)
  redis.call('XCLAIM', source, group, entry[2], 0, entry[1], 'IDLE', entry[3],
    'RETRYCOUNT', entry[4], 'JUSTID')
  touch(entry[2])
end

-- A count as written in x-delivery-count: only a canonical decimal integer is trusted (nil else).
local function canonicalCount(value)
  if #value <= 15 and string.find(value, '^%d+$') and (value == '0' or string.byte(value, 1) ~= 48) then
    return tonumber(value)
  end
  return nil
end

-- Deliveries recorded by earlier incarnations; an untrusted value counts 0 and is reported.
local function earlierDeliveries(id, value)
  if value == nil then return 0 end
  local count = canonicalCount(value)
  if count then return count end
  result.invalidCounts = result.invalidCounts + 1
  if #invalidCountIds < MAX_REPORTED_IDS then invalidCountIds[#invalidCountIds + 1] = id end
  return 0
end

-- Delivery counts as text, formatted once per value.
local countTexts = {}
local function countText(count)
  local text = countTexts[count]
  if not text then
    text = string.format('%d', count)
    countTexts[count] = text
  end
  return text
end

-- Handles one claimed entry completely: written and acknowledged, handed off, or put back.
-- `entry` is its XPENDING line from before the claim: id, owner, idle time, deliveries.
local function handle(id, fields, entry)
  local fieldCount = #fields
  if fieldCount > maxFieldValues then
    restore(entry)
    oversizedCount = oversizedCount + 1
    oversized[oversizedCount] = id
    return
  end
  claimedCount = claimedCount + 1
  -- A passed entry claimed before it idled says nothing about minIdleMs.
  if activeOwners and activeOwners[entry[2]] and entry[3] >= claimIdle then
    fromActiveCount = fromActiveCount + 1
  end
  -- `plain`: no field is named like a metadata field (every first incarnation). The copy of a
  -- plain entry is its own fields table (a fresh reply table) with the metadata appended.
  local plain = true
  for i = 1, fieldCount, 2 do
    if deadLetterNames[fields[i]] then
      plain = false
      break
    end
  end
  local originalId, deliveries = id, entry[4]
  local forget = nil
  if not plain then
    local countValue = nil
    for i = 1, fieldCount, 2 do
      local name = fields[i]
      if name == 'x-original-id' then
        originalId = fields[i + 1]
      elseif name == 'x-delivery-count' then
        countValue = fields[i + 1]
      end
    end
    deliveries = earlierDeliveries(id, countValue) + deliveries
    if carriedKept and countValue and canonicalCount(countValue) then
      forget = padded(id) .. ':' .. countValue -- its record, if it has one
    end
  end
  local reason = nil
  if deliveries >= maxDeliveries then
    reason = 'max-deliveries'
  elseif deadLetterAfterIdle and entry[3] >= deadLetterAfterIdle then
    -- No entry stuck forever: not even one that reassign cannot hand to anyone.
    reason = 'max-idle'
  elseif action == 'dead-letter' then
    reason = 'action'
  end
  if reason then
    if plain then
      -- DEAD_LETTER_METADATA written out, names in order (a test checks them against the include).
      local n = fieldCount
      fields[n + 1] = 'x-original-id'
      fields[n + 2] = originalId
      fields[n + 3] = 'x-original-stream'
      fields[n + 4] = originalStream
      fields[n + 5] = 'x-original-group'
      fields[n + 6] = group
      fields[n + 7] = 'x-delivery-count'
      fields[n + 8] = countTexts[deliveries] or countText(deliveries)
      fields[n + 9] = 'x-dead-letter-reason'
      fields[n + 10] = reason
      fields[n + 11] = 'x-dead-lettered-at'
      fields[n + 12] = nowMsString
      fields[n + 13] = 'x-last-consumer'
      fields[n + 14] = entry[2]
      local written
      if capped then
        written = call('XADD', deadLetters, 'MAXLEN', '~', deadLetterMaxLen, '*', unpack(fields, 1, n + 14))
      else
        written = call('XADD', deadLetters, '*', unpack(fields, 1, n + 14))
      end
      if indexing then indexDeadLetter(written, fields, n + 1) end
    else
      deadLetterMetadata[2] = originalId
      deadLetterMetadata[8] = countText(deliveries)
      deadLetterMetadata[10] = reason
      deadLetterMetadata[14] = entry[2]
      local written = writeFiltered(deadLetterArgs, deadLetterPrefix, deadLetterMetadata,
        deadLetterNames, fields)
      if indexing then indexDeadLetter(written, deadLetterMetadata, 1) end
    end
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
    if reason == 'max-deliveries' then
      result.deadLetteredMaxDeliveries = result.deadLetteredMaxDeliveries + 1
    elseif reason == 'max-idle' then
      result.deadLetteredMaxIdle = result.deadLetteredMaxIdle + 1
    else
      result.deadLetteredAction = result.deadLetteredAction + 1
    end
  elseif action == 'requeue' then
    local copy
    if plain then
      -- The usual case written out: this is most of what the script does per entry
      -- (REQUEUE_METADATA, names in order; a test checks them against the include).
      fields[fieldCount + 1] = 'x-original-id'
      fields[fieldCount + 2] = originalId
      fields[fieldCount + 3] = 'x-delivery-count'
      fields[fieldCount + 4] = countTexts[deliveries] or countText(deliveries)
      copy = call('XADD', target, '*', unpack(fields, 1, fieldCount + 4))
    else
      requeueMetadata[2] = originalId
      requeueMetadata[4] = countText(deliveries)
      copy = writeFiltered(requeueArgs, requeuePrefix, requeueMetadata, requeueNames, fields)
    end
    ackCount = ackCount + 1
    acks[ackCount] = id
    if recordCopies then
      records[recordCount + 1] = 0
      records[recordCount + 2] = padded(copy) .. ':' .. (countTexts[deliveries] or countText(deliveries))
      recordCount = recordCount + 2
    end
    if forget then
      forgottenCount = forgottenCount + 1
      forgotten[forgottenCount] = forget
    end
    requeuedCount = requeuedCount + 1
    if requeuedCount <= MAX_REPORTED_IDS then requeuedIds[requeuedCount] = id end
  else
    local consumer = pickConsumer(entry[2])
    if consumer then
      -- The janitor's claim raised the count by one: that increment is the hand-off's delivery.
      redis.call('XCLAIM', source, group, consumer, 0, id, 'JUSTID')
      touch(consumer)
      result.reassigned = result.reassigned + 1
      if reassignedIdCount < MAX_REPORTED_IDS then
        reassignedIdCount = reassignedIdCount + 1
        reassignedIds[reassignedIdCount] = id
      end
    else
      restore(entry)
      result.leftPending = result.leftPending + 1
    end
  end
end

local function acknowledge()
  for first = 1, ackCount, 1000 do
    redis.call('XACK', source, group, unpack(acks, first, math.min(first + 999, ackCount)))
  end
  ackCount = 0
  for first = 1, recordCount, 2000 do
    redis.call('ZADD', targetCarriedKey, unpack(records, first, math.min(first + 1999, recordCount)))
  end
  recordCount = 0
  for first = 1, forgottenCount, 1000 do
    redis.call('ZREM', carriedKey, unpack(forgotten, first, math.min(first + 999, forgottenCount)))
  end
  forgottenCount = 0
end

-- Only to recover from an unforeseen error: the XPENDING line of a claimed id.
local function lineOf(window, id)
  for i = 1, #window do
    if window[i][1] == id then return window[i] end
  end
  return nil
end

-- The claimed entries of the last XAUTOCLAIM, and how many of them are handled.
local claiming, handledCount = NONE, 0

-- Accounts for one XAUTOCLAIM over the run window[first..last] (due entries next to each other
-- in the PEL): its claimed entries (`items`: id and fields) and its deleted ids come back in PEL
-- order, and are matched against the run in one pass, without a lookup table; each claimed entry
-- is handled. Returns the position after the last one accounted for.
local function settle(window, first, last, items, deleted)
  claiming, handledCount = items, 0
  -- Once per call, before the first claimed entry is handled (and before anything is put back).
  if activeOwners == nil then activeOwners = activeOwnerSet(liveConsumers()) end
  local itemCount = #items
  if itemCount == last - first + 1 and deleted[1] == nil then
    -- The usual case: every entry of the run claimed, in order.
    local offset = first - 1
    for k = 1, itemCount do
      local item, entry = items[k], window[offset + k]
      local id = item[1]
      if id ~= entry[1] then error('XAUTOCLAIM answered outside its run at ' .. window[first][1]) end
      handledCount = k - 1
      handle(id, item[2] or {}, entry)
    end
    handledCount = itemCount
    return last + 1
  end
  local deletedCount = 0
  local position = first
  while position <= last do
    local entry = window[position]
    local id = entry[1]
    local item = items[handledCount + 1]
    if item and item[1] == id then
      handle(id, item[2] or {}, entry)
      handledCount = handledCount + 1
    elseif deleted[deletedCount + 1] == id then
      deletedCount = deletedCount + 1
      ghostCount = ghostCount + 1
      ghosts[ghostCount] = id
    else
      break
    end
    position = position + 1
  end
  if deletedCount < #deleted or handledCount < #items then
    for i = deletedCount + 1, #deleted do
      ghostCount = ghostCount + 1
      ghosts[ghostCount] = deleted[i]
    end
    error('XAUTOCLAIM answered outside its run at ' .. window[first][1])
  end
  if position == first then error('XAUTOCLAIM made no progress at ' .. window[first][1]) end
  return position
end

-- Bodies in one sequential read. XAUTOCLAIM looks each claimed entry up in the stream twice
-- (does it exist, then its fields). For requeue and dead-letter, a run of due entries is claimed
-- with XAUTOCLAIM JUSTID (the existence check only; deleted entries are still removed and
-- reported), and when the claimed entries are next to each other in the stream too (a crashed
-- consumer's batch), one XRANGE reads their fields in one sequential pass. A requeue or a
-- dead-letter acknowledges the original, so the delivery count JUSTID leaves alone is never read
-- again; reassign counts a hand-off by the claim's increment and keeps the usual claim. The first
-- RANGE_PROBE entries of a run are claimed and read first: when other entries lie between them
-- (acknowledged ones, or other consumers' entries), their bodies are fetched with XCLAIM (one
-- lookup each more than the usual claim, for RANGE_PROBE entries at most) and the call claims as
-- usual from then on, since reading past other entries costs as much as the lookups it saves.
local rangeReads = action == 'requeue' or action == 'dead-letter'
local RANGE_PROBE = 32
-- Shorter runs (the isolated stuck entries of a mostly fresh PEL) claim with one call instead
-- of two: measured, the second call costs more than the lookups it saves.
local RANGE_MIN_RUN = 4
-- XCLAIM takes its ids on the Lua C stack too (see maxFieldValues).
local XCLAIM_CHUNK = 5000

-- The bodies of the claimed entries `ids` (in stream order, all existing), in their order.
local function bodiesOf(ids)
  local n = #ids
  if n == 0 then return ids end
  local chunk = redis.call('XRANGE', source, ids[1], ids[n], 'COUNT', n)
  -- The span holds every claimed entry, so n entries come back; they are exactly the claimed
  -- ones when the last of them is ids[n].
  if chunk[n][1] == ids[n] then return chunk end
  rangeReads = false -- other entries in between: not adjacent
  local same = 0
  while chunk[same + 1][1] == ids[same + 1] do same = same + 1 end
  for k = n, same + 1, -1 do chunk[k] = nil end
  for from = same + 1, n, XCLAIM_CHUNK do
    local to = math.min(from + XCLAIM_CHUNK - 1, n)
    local fetched = redis.call('XCLAIM', source, group, janitor, 0, unpack(ids, from, to))
    for k = 1, #fetched do chunk[from + k - 1] = fetched[k] end
  end
  return chunk
end

-- Claims the run's entries window[first..last] with JUSTID, reads their bodies and handles
-- them. Returns the position after the last entry accounted for.
local function claimAndRead(window, first, last, runIdle)
  claimedAny = true
  local reply = redis.call('XAUTOCLAIM', source, group, janitor, runIdle, window[first][1],
    'COUNT', last - first + 1, 'JUSTID')
  claiming, handledCount = reply[2], 0 -- until their bodies are read: put back on an error
  return settle(window, first, last, bodiesOf(reply[2]), reply[3] or NONE)
end

-- One run: one XAUTOCLAIM with COUNT the length of the run (each idle or deleted entry uses one
-- up, so the claim never reaches past the run, whose owners are known, nor scans fresh entries).
-- `runIdle` is its min-idle: claimIdle, or 0 when the run holds a passed entry that is not idle
-- (every entry of a run is due, and nothing else runs inside the script, so 0 claims exactly
-- the run). Returns the position after the last entry it accounted for.
local function sweepRun(window, first, last, runIdle)
  if rangeReads and last - first + 1 >= RANGE_MIN_RUN then
    local position = claimAndRead(window, first, math.min(last, first + RANGE_PROBE - 1), runIdle)
    if rangeReads and position <= last then
      position = claimAndRead(window, position, last, runIdle)
    end
    return position
  end
  claimedAny = true
  local reply = redis.call('XAUTOCLAIM', source, group, janitor, runIdle, window[first][1],
    'COUNT', last - first + 1)
  return settle(window, first, last, reply[2], reply[3] or NONE)
end

-- Backoff: an entry idle past claimIdle but not past its own threshold is waiting. Its idle time
-- in this window's copy of its XPENDING line is set to -1, so that the runs below split around
-- it: never claimed nor touched (only claimed entries' lines are used to put entries back).
-- Below claimIdle or from alwaysDue on, the answer needs no per-entry threshold.
-- The tier follows every delivery so far, as maxDeliveries does: a requeued copy (or a retry
-- lane's) carries its earlier deliveries in x-delivery-count, looked up in the carried counts
-- (see "Carried counts": one lookup, no body); only for entries in between, and only when
-- backoff is configured. An entry written before counts were kept is read once and recorded.
local function carriedDeliveries(id)
  local key = padded(id)
  local found = call('ZRANGEBYLEX', carriedKey, '[' .. key .. ':', '(' .. key .. ';', 'LIMIT', 0, 1)[1]
  if found then return tonumber(string.sub(found, #key + 2)) end
  if carriedFrom and key > carriedFrom then return 0 end -- written since: not a copy of ours
  local read = redis.call('XRANGE', source, id, id)[1]
  if not read then return 0 end -- a ghost: XAUTOCLAIM reports it
  local fields, count = read[2], 0
  for i = #fields - 1, 1, -2 do -- metadata is written last
    if fields[i] == 'x-delivery-count' then
      -- Untrusted: 0 here, reported once the entry is handled (earlierDeliveries).
      count = canonicalCount(fields[i + 1]) or 0
      break
    end
  end
  call('ZADD', carriedKey, 0, key .. ':' .. countText(count))
  return count
end

local function markWaiting(window, count)
  for i = 1, count do
    local entry = window[i]
    local idle = entry[3]
    if idle >= claimIdle and idle < alwaysDue and entry[4] <= maxDeliveries then
      if idle < dueAfter(tiers, tierCount, spread, entry[1], entry[4] + carriedDeliveries(entry[1])) then
        entry[3] = -1
      end
    end
  end
end

-- Due: idle at least claimIdle (minIdle without backoff), or passed: delivered more than
-- maxDeliveries times (the PEL's own count, no body read), whatever its idle time and tier. A
-- consumer that re-reads its own PEL resets the idle time of a failing entry at each read: only
-- its count shows it. At maxDeliveries it may still be in its last allowed delivery. (Written
-- out below where it runs per entry.)

-- One window: claims its due entries (at most `claimLimit`) and handles them. Returns the
-- number of entries examined.
local function sweepWindow(window, size, claimLimit)
  -- The window ends before its (claimLimit + 1)-th due entry.
  local examined = math.min(#window, size)
  if backoff then markWaiting(window, examined) end
  -- notIdle: due entries below claimIdle (passed ones), which XAUTOCLAIM claims only with 0.
  local dueCount, notIdle = 0, 0
  for i = 1, examined do
    local entry = window[i]
    local idle = entry[3] >= claimIdle
    if idle or entry[4] > maxDeliveries then
      if dueCount == claimLimit then
        examined = i - 1
        break
      end
      dueCount = dueCount + 1
      if not idle then notIdle = notIdle + 1 end
    end
  end
  if dueCount == 0 then return examined end

  local claimStartedUs = nowUs()
  local ok, err = pcall(function()
    local first = 1
    while first <= examined do
      local entry = window[first]
      if entry[3] >= claimIdle or entry[4] > maxDeliveries then
        local last = examined -- every entry due: one run, the usual case of a stuck PEL
        if dueCount < examined then
          last = first
          while last < examined do
            local after = window[last + 1]
            if after[3] < claimIdle and after[4] <= maxDeliveries then break end
            last = last + 1
          end
        end
        local runIdle = claimIdle
        if notIdle > 0 then
          for i = first, last do
            if window[i][3] < claimIdle then
              runIdle = 0
              break
            end
          end
        end
        first = sweepRun(window, first, last, runIdle)
      else
        first = first + 1
      end
    end
  end)
  if not ok then
    -- Unforeseen: keep every copy with its acknowledgement, put everything else back.
    failure = type(err) == 'table' and (err.err or tostring(err)) or tostring(err)
    for i = handledCount + 1, #claiming do
      local claimed = claiming[i] -- an entry, or an id after a JUSTID claim
      local entry = lineOf(window, type(claimed) == 'table' and claimed[1] or claimed)
      if entry then pcall(restore, entry) end
    end
  end
  claiming, handledCount = NONE, 0
  acknowledge()
  local endedUs = nowUs()
  result.claimUs = result.claimUs + endedUs - claimStartedUs
  return examined, endedUs
end

local loopStartedUs = nowUs()
local windowSize = math.min(math.max(firstWindow, 1), maxExamined)
while failure == nil do
  local claimLimit = maxClaimed - claimedCount - oversizedCount
  local examineLimit = maxExamined - result.examined
  if claimLimit <= 0 or examineLimit <= 0 then break end
  local size = math.min(windowSize, examineLimit)
  local window = redis.call('XPENDING', source, group, cursor, '+', size + 1)
  result.windows = result.windows + 1
  if carriedKept and cursor == '0-0' and window[1] then
    -- A pass starts at the oldest pending entry: every copy below it was acknowledged.
    redis.call('ZREMRANGEBYLEX', carriedKey, '-', '(' .. padded(window[1][1]))
  end
  local examined, claimsEndedUs = sweepWindow(window, size, claimLimit)
  result.examined = result.examined + examined
  if examined < #window then
    cursor = window[examined + 1][1]
  else
    cursor = '0-0'
    break
  end
  -- The next window takes what the rest of the budget allows at the cost seen so far.
  local now = claimsEndedUs or nowUs()
  local leftUs = budgetUs - (now - startedUs)
  local perEntryUs = (now - loopStartedUs) / math.max(result.examined, 1)
  windowSize = math.min(10000, math.floor(leftUs / math.max(perEntryUs, 0.05)))
  if windowSize < 16 then break end
end

if touchedCount > 0 then
  -- After the writes, so every XCLAIM of this call happened at or before the recorded time.
  local endMs = string.format('%d', math.floor(nowUs() / 1000))
  local args = { 'HSET', touchesKey }
  for consumer in pairs(touched) do
    args[#args + 1] = consumer
    args[#args + 1] = endMs
  end
  redis.call(unpack(args))
  -- A record matters only until the consumer's idle time passes minIdle anyway.
  redis.call('PEXPIRE', touchesKey, 2 * minIdle + 1000)
end
-- The janitor's consumer owns nothing once the call is done; leaving it would show a phantom
-- consumer to every dashboard. Checked first, because DELCONSUMER discards pending entries.
if claimedAny and #redis.call('XPENDING', source, group, '-', '+', 1, janitor) == 0 then
  redis.call('XGROUP', 'DELCONSUMER', source, group, janitor)
end

result.claimed, result.requeued = claimedCount, requeuedCount
result.claimedFromActiveConsumer = fromActiveCount
result.deadLettersDropped = 0
if capped then
  result.deadLettersDropped = deadLettersBefore + result.deadLetteredMaxDeliveries +
    result.deadLetteredAction + result.deadLetteredMaxIdle - redis.call('XLEN', deadLetters)
end
if result.deadLettersDropped > 0 then
  -- The cap dropped the oldest dead letters: every index of the stream loses what is below its
  -- first id now (one entry read, only when the cap dropped some).
  local first = redis.call('XRANGE', deadLetters, '-', '+', 'COUNT', 1)[1]
  if first then
    redis.call('SET', indexFloorKey, first[1])
    if indexing then redis.call('XTRIM', indexKey, 'MINID', first[1]) end
  end
end
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
