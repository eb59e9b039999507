#!lua flags=
--[[
sweepPage: one call of a sweep of one stream/group pair, atomically.

Reads windows of the PEL from the cursor (XPENDING: owner, idle time and delivery count of each
entry), re-dispatches or dead-letters each due entry, and goes on while the time budget allows.
Due: idle past the claim threshold, or passed (delivered more than maxDeliveries times, by its
XPENDING count) whatever its idle time. Requeue and dead-letter claim nothing: one XRANGE reads
due entries next to each other in the stream, an id it does not return is a ghost (see "Bodies
in one sequential read"); reassign, and due entries with others between them, are claimed with
XAUTOCLAIM (whose deleted ids are the ghosts). Running it again after a crash writes nothing
twice: what was acknowledged is no longer pending, what was handed off is not idle any more (nor
passed: only an entry below maxDeliveries is handed off), what was left was not written.

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
                     inside this call; requeue and dead-letter of adjacent entries claim none)
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
metadata.lua, limits.lua, backoff.lua (shared), and the parts of this script, in the order they
run: sweepIndex.lua (the dead-letter index), sweepCounts.lua (delivery counts), sweepCarried.lua
(carried counts, backoff), sweepConsumers.lua (live consumers, reassign), sweepCopies.lua (what a
copy holds), sweepActions.lua (one function per action), sweepRuns.lua (windows, runs, claims),
sweepReply.lua (the reply).
Each names what it uses from this file; this file keeps the arguments, the checks, the decision
for each claimed entry (handle) and the loop over windows.

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
local types = {} -- key -> its type: a key given twice (a requeue into the source) is read once
local function checkType(key, wanted, mayBeMissing)
  local keyType = types[key] or redis.call('TYPE', key)['ok']
  types[key] = keyType
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

------------------------------------------------------------------------------------------------
-- What the call did (the reply). The counters every entry may move are locals: a field of
-- `result` is a hash lookup. Lists are filled with explicit counts: `#list` is a search in Lua
-- 5.1, not a field read. The id lists keep the first MAX_REPORTED_IDS ids per action.
local result = {
  examined = 0, reassigned = 0, deadLetteredMaxDeliveries = 0, deadLetteredAction = 0,
  deadLetteredMaxIdle = 0, leftPending = 0, windows = 0, invalidCounts = 0, claimUs = 0,
}
local claimedCount, requeuedCount, fromActiveCount = 0, 0, 0
local ghosts, ghostCount = {}, 0
local oversized, oversizedCount = {}, 0
local invalidCountIds = {}
local requeuedIds = {}
local reassignedIds, reassignedIdCount = {}, 0
local deadLetteredIds, deadLetteredIdCount = {}, 0
-- Written at the end of each window: acknowledgements, and the carried counts' ZADD arguments
-- (score, member) of the copies written and records of acknowledged copies.
local acks, ackCount = {}, 0
local records, recordCount = {}, 0
local forgotten, forgottenCount = {}, 0
local cursor = arg.cursor
local claimedAny = false
local claimedEntries = false -- the entries handled were claimed (else only read: none put back)
local failure = nil
local NONE = {}

--- @include "sweepIndex"
--- @include "sweepCounts"
--- @include "sweepCarried"
--- @include "sweepConsumers"
--- @include "sweepCopies"
--- @include "sweepActions"

-- Handles one due entry completely: written and acknowledged, handed off, or left (put back if
-- claimed). `entry` is its XPENDING line from before any claim: id, owner, idle time, deliveries.
local function handle(id, fields, entry)
  local fieldCount = #fields
  if fieldCount > maxFieldValues then
    if claimedEntries then restore(entry) end
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
  local plain, names = true, deadLetterNames
  for i = 1, fieldCount, 2 do
    if names[fields[i]] then
      plain = false
      break
    end
  end
  local originalId, deliveries = id, entry[4]
  local forget = nil
  if not plain then
    originalId, deliveries, forget = earlierIncarnations(id, fields, deliveries)
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
    if not plain then fields, fieldCount = ownFields(fields, deadLetterNames) end
    return deadLetter(id, fields, fieldCount, entry, originalId, deliveries, reason, forget)
  elseif action == 'requeue' then
    if not plain then fields, fieldCount = ownFields(fields, requeueNames) end
    return requeue(id, fields, fieldCount, originalId, deliveries, forget)
  end
  return reassign(id, entry)
end

--- @include "sweepRuns"
--- @include "sweepReply"

sweepWindows()
recordTouches()
dropJanitorConsumer()

return sweepReply()
