#!lua
--[[
redriveTaskBatch: one batch of a redrive task (`dlq redrive --async`), run by the leader: moves
the next dead letters of the task's range back to its target and advances the task's cursor and
counts, in one call. The task's position lives in its hash, not in the arguments: a batch
repeated after a crash, or run by the next leader, starts where the last one that ran ended, so
no dead letter is moved twice or skipped.

A RUNNING task moves at most the move limit; when its range is scanned or `toMove` is reached it
becomes COMPLETED. A CANCELLING task becomes CANCELLED without moving anything. A check that
fails (a key of the wrong type, a target out of ids, an XADD error) makes it FAILED with the
reason in `failure`, after the dead letters already copied in this call are deleted. Whenever a
task ends, the active-task key is deleted (if it still names this task) and the hash expires
after the task's keepMs. Other statuses (or no task) change nothing.

KEYS[1]  the task hash (src/core/redriveTask.ts)
KEYS[2]  the dead-letter stream's active-task key
KEYS[3]  the dead-letter stream (the task's deadLetterStream)
KEYS[4]  the target stream (the task's target)
KEYS[5]  the group's dead-letter index (the task's index)
KEYS[6]  optional fence key (src/core/fence.ts). One server: the lease key, which must hold
         ARGV[1] or nothing changes. Redis Cluster (ARGV[1] is 'token:<n>'): a key in the
         dead-letter stream's slot holding the highest fencing token that wrote there

ARGV[1]  fence value, or 'token:<n>' on Cluster (ignored without KEYS[6])
ARGV[2]  scan limit: at most this many dead letters are examined
ARGV[3]  move limit: at most this many are moved (the runner's rate)

Returns { status, movedNow, moved, toMove, failure, durationUs }: the task's status after the
call ('' when there is no task), the dead letters this call moved, the task's counts, its failure
(''), and the call's own duration (Redis TIME), by which the runner sizes the next batch.
Errors (nothing changed): FENCED.
Included when loaded: includes/fence.lua, deadLetterPage.lua, redriveMove.lua.
]]

--- @include "fence"
--- @include "deadLetterPage"
--- @include "redriveMove"

local function nowUs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local startedUs = nowUs()

local task, active, deadLetters, target, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local scanLimit, moveLimit = tonumber(ARGV[2]), tonumber(ARGV[3])

local fenced, fenceToken = checkDeclaredFence(6, ARGV[1], 'runs the redrive tasks here')
if fenced then return redis.error_reply('FENCED ' .. fenced) end

local fields = redis.call('HGETALL', task)
local t = {}
for i = 1, #fields, 2 do t[fields[i]] = fields[i + 1] end
local moved, toMove = tonumber(t['moved'] or '0'), tonumber(t['toMove'] or '0')
if t['status'] ~= 'RUNNING' and t['status'] ~= 'CANCELLING' then
  return { t['status'] or '', 0, moved, toMove, t['failure'] or '', nowUs() - startedUs }
end

local now = redis.call('TIME')
local nowMs = string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))

-- Every write below is past the checks that could refuse the call: the fence first.
local function raiseFence()
  if fenceToken then redis.call('SET', KEYS[6], fenceToken) end
end

local function finish(status, failure, movedNow, cursor)
  raiseFence()
  redis.call('HSET', task, 'status', status, 'moved', moved, 'cursor', cursor,
    'finishedAt', nowMs, 'failure', failure or '')
  if redis.call('GET', active) == t['id'] then redis.call('DEL', active) end
  redis.call('PEXPIRE', task, tonumber(t['keepMs'] or '86400000'))
  return { status, movedNow, moved, toMove, failure or '', nowUs() - startedUs }
end

if t['status'] == 'CANCELLING' then return finish('CANCELLED', nil, 0, t['cursor']) end

local wrongType, exists = streamKeyTypes({ deadLetters, target, index })
if wrongType then return finish('FAILED', wrongType, 0, t['cursor']) end
local limit = math.max(0, math.min(moveLimit, toMove - moved))
local exhausted = idsRefusal(exists, target, limit)
if exhausted then return finish('FAILED', exhausted, 0, t['cursor']) end

local readers = readersOf(exists[deadLetters] and deadLetters or nil)
local page = {}
if limit > 0 then page = deadLetterPage(deadLetters, t['cursor'], t['endId'], scanLimit, #ARGV + 1) end

raiseFence()
local r = redriveMove(page, {
  deadLetters = deadLetters, index = index, target = target, source = t['stream'],
  group = t['group'], reason = t['reason'] or '', moveLimit = limit, dryRun = false,
  byIds = false, readers = readers, nowMs = nowMs, cursor = t['cursor'],
})
moved = moved + r.deleted
if r.held > 0 then redis.call('HINCRBY', task, 'heldBack', r.held) end
-- On a failure the dead letter that failed is still there, and the cursor stays before it.
if r.failure then return finish('FAILED', r.failure, r.deleted, r.nextCursor) end
local scanned = #page < scanLimit and r.examined == #page
if moved >= toMove or scanned then return finish('COMPLETED', nil, r.moved, r.nextCursor) end
redis.call('HSET', task, 'moved', moved, 'cursor', r.nextCursor, 'updatedAt', nowMs)
return { 'RUNNING', r.moved, moved, toMove, '', nowUs() - startedUs }
