--[[
sweepPage: one page of a sweep of one stream/group pair, atomically.

Claims the entries idle for at least min-idle in a window of the PEL that starts at the cursor,
then re-dispatches or dead-letters each of them and acknowledges what left the group, all in one
script so that a crash of the janitor can never leave a copy without its acknowledgement (or the
reverse), and running the page again writes nothing twice: what was acknowledged is no longer
pending, what was reassigned has a fresh idle time, what was left pending is only put back.

KEYS[1]  source stream
KEYS[2]  requeue target stream (the source itself by default)
KEYS[3]  dead-letter stream
KEYS[4]  optional fence key (src/sweep/slotFence.ts). One server: the lease key, which must hold
         ARGV[9] or nothing changes. Redis Cluster (ARGV[9] is 'token:<n>'): a key in the
         source's slot holding the highest fencing token that wrote here; a lower n changes
         nothing, a higher one is stored before the first write

ARGV[1]  group
ARGV[2]  the janitor's own consumer name (it owns claimed entries only inside this script)
ARGV[3]  min-idle in ms
ARGV[4]  cursor (a PEL id, inclusive; 0-0 to start)
ARGV[5]  page size: at most this many PEL entries are examined
ARGV[6]  maxDeliveries
ARGV[7]  action: requeue | reassign | dead-letter
ARGV[8]  dead-letter MAXLEN ~ cap
ARGV[9]  fence: the lease value, or 'token:<n>' on Cluster (ignored without KEYS[4])
ARGV[10] number of reassign candidates that follow, best first
ARGV[11..] reassign candidates (live consumers of the group)

Returns { nextCursor, examined, claimed, requeued, reassigned, deadLetteredMaxDeliveries,
          deadLetteredAction, leftPending, ghostIds, oversizedIds }
Errors (nothing changed): FENCED, NOSTREAM, WRONGTYPE, NOGROUP.

Bodies stay inside Redis: Lua strings are byte strings, so fields are copied exactly, in order.
]]

local source, target, deadLetters = KEYS[1], KEYS[2], KEYS[3]
local group, janitor = ARGV[1], ARGV[2]
local minIdle = tonumber(ARGV[3])
local cursor = ARGV[4]
local pageSize = tonumber(ARGV[5])
local maxDeliveries = tonumber(ARGV[6])
local action = ARGV[7]
local deadLetterMaxLen = ARGV[8]
local candidateCount = tonumber(ARGV[10])

-- The fence: checked before anything is read or written, raised (Cluster) just before the first
-- write. Fencing tokens are INCR results, far below 2^53, so comparing them as numbers is exact.
local fenceToken = nil
if #KEYS >= 4 then
  if string.sub(ARGV[9], 1, 6) == 'token:' then
    fenceToken = tonumber(string.sub(ARGV[9], 7))
    local highest = tonumber(redis.call('GET', KEYS[4]) or '0') or 0
    if fenceToken < highest then
      return redis.error_reply('FENCED a newer leader (fencing token ' .. highest .. ') has swept this stream')
    end
    if fenceToken == highest then fenceToken = nil end
  elseif redis.call('GET', KEYS[4]) ~= ARGV[9] then
    return redis.error_reply('FENCED the lease is not held by this process')
  end
end

local function requireStream(key, mayBeMissing)
  local keyType = redis.call('TYPE', key)['ok']
  if keyType == 'stream' or (mayBeMissing and keyType == 'none') then return nil end
  if keyType == 'none' then return 'NOSTREAM no such stream: ' .. key end
  return 'WRONGTYPE ' .. key .. ' holds a ' .. keyType .. ', not a stream'
end
local problem = requireStream(source, false)
  or requireStream(target, true)
  or requireStream(deadLetters, true)
if problem then return redis.error_reply(problem) end

-- The window: owners, idle times and delivery counts before anything is claimed. The claim
-- below changes the owner to the janitor, so this is the only moment the owner is known.
local window = redis.pcall('XPENDING', source, group, cursor, '+', pageSize)
if window.err then return redis.error_reply(window.err) end
-- Raised even when this page finds nothing to do: the stream has been swept under our token.
if fenceToken then redis.call('SET', KEYS[4], fenceToken) end
local windowSize = #window
if windowSize == 0 then
  return { '0-0', 0, 0, 0, 0, 0, 0, 0, {}, {} }
end

local pending = {}
local idleInWindow = 0
for _, entry in ipairs(window) do
  pending[entry[1]] = entry
  if entry[3] >= minIdle then idleInWindow = idleInWindow + 1 end
end

local function parseId(id)
  local dash = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end
local function idBefore(a, b)
  local aMs, aSeq = parseId(a)
  local bMs, bSeq = parseId(b)
  return aMs < bMs or (aMs == bMs and aSeq < bSeq)
end
local function nextId(id)
  local ms, seq = parseId(id)
  if seq < 9007199254740991 then return string.format('%d-%d', ms, seq + 1) end
  return string.format('%d-0', ms + 1)
end

local result = { '0-0', 0, 0, 0, 0, 0, 0, 0, {}, {} }
if idleInWindow == 0 then
  result[2] = windowSize
  if windowSize == pageSize then result[1] = nextId(window[windowSize][1]) end
  return result
end

-- COUNT is the number of idle entries in the window: every idle entry and every deleted entry
-- uses up one, so the claim can never reach past the window whose owners we know.
local claim = redis.call('XAUTOCLAIM', source, group, janitor, minIdle, cursor, 'COUNT', idleInWindow)
local nextCursor = claim[1]
result[1] = nextCursor
-- Examined: the window entries before the new cursor. The window is sorted, so the usual case
-- (the cursor moved past the whole window) costs one comparison, the rest a binary search.
if nextCursor == '0-0' or idBefore(window[windowSize][1], nextCursor) then
  result[2] = windowSize
else
  local low, high = 0, windowSize
  while low < high do
    local middle = math.floor((low + high + 1) / 2)
    if idBefore(window[middle][1], nextCursor) then low = middle else high = middle - 1 end
  end
  result[2] = low
end
local ghosts = claim[3] or {}

local now = redis.call('TIME')
local nowMs = string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
-- redis.call passes its arguments on the Lua C stack, which holds about 8000 values.
local maxFieldValues = 7900

-- The XADD argument lists are built once per page and reused for every entry: only a few slots
-- change, and the fields follow the metadata (names that the metadata sets are skipped).
local deadLetterArgs = {
  'XADD', deadLetters, 'MAXLEN', '~', deadLetterMaxLen, '*',
  'x-original-id', '', 'x-original-stream', source, 'x-original-group', group,
  'x-delivery-count', '', 'x-dead-letter-reason', '', 'x-dead-lettered-at', nowMs,
  'x-last-consumer', '',
}
local requeueArgs = { 'XADD', target, '*', 'x-original-id', '', 'x-delivery-count', '' }
local deadLetterNames, requeueNames = {}, {}
for i = 7, #deadLetterArgs, 2 do deadLetterNames[deadLetterArgs[i]] = true end
for i = 4, #requeueArgs, 2 do requeueNames[requeueArgs[i]] = true end

local function addWithFields(args, prefixLength, skip, fields)
  local n = prefixLength
  for i = 1, #fields, 2 do
    local name = fields[i]
    if not skip[name] then
      args[n + 1] = name
      args[n + 2] = fields[i + 1]
      n = n + 2
    end
  end
  redis.call(unpack(args, 1, n))
end

local toAcknowledge, acknowledgeCount = {}, 0
local function acknowledge(id)
  acknowledgeCount = acknowledgeCount + 1
  toAcknowledge[acknowledgeCount] = id
end

-- Puts an entry back where it was: same owner, same idle time, same delivery count.
local function restore(id, entry)
  redis.call('XCLAIM', source, group, entry[2], 0, id, 'IDLE', entry[3], 'RETRYCOUNT', entry[4], 'JUSTID')
end

local function pickConsumer(owner)
  for i = 1, candidateCount do
    local candidate = ARGV[10 + i]
    if candidate ~= owner then return candidate end
  end
  return nil
end

for _, claimed in ipairs(claim[2]) do
  local id, fields = claimed[1], claimed[2]
  -- Always in the window (see COUNT above); the fallback only keeps a broken invariant harmless.
  local entry = pending[id] or { id, janitor, 0, 1 }
  if not fields then
    -- Redis 6.2 returns deleted entries with a nil body and keeps them pending; 7.0 removes them.
    ghosts[#ghosts + 1] = id
    acknowledge(id)
  elseif #fields > maxFieldValues then
    restore(id, entry)
    result[10][#result[10] + 1] = id
  else
    result[3] = result[3] + 1
    local originalId, earlierDeliveries = id, 0
    for i = 1, #fields, 2 do
      if fields[i] == 'x-original-id' then
        originalId = fields[i + 1]
      elseif fields[i] == 'x-delivery-count' then
        earlierDeliveries = tonumber(fields[i + 1]) or 0
      end
    end
    local deliveries = earlierDeliveries + entry[4]
    local reason = nil
    if deliveries >= maxDeliveries then
      reason = 'max-deliveries'
    elseif action == 'dead-letter' then
      reason = 'action'
    end
    if reason then
      deadLetterArgs[8] = originalId
      deadLetterArgs[14] = tostring(deliveries)
      deadLetterArgs[16] = reason
      deadLetterArgs[20] = entry[2]
      addWithFields(deadLetterArgs, 20, deadLetterNames, fields)
      acknowledge(id)
      if reason == 'max-deliveries' then result[6] = result[6] + 1 else result[7] = result[7] + 1 end
    elseif action == 'requeue' then
      requeueArgs[5] = originalId
      requeueArgs[7] = tostring(deliveries)
      addWithFields(requeueArgs, 7, requeueNames, fields)
      acknowledge(id)
      result[4] = result[4] + 1
    else
      local consumer = pickConsumer(entry[2])
      if consumer then
        -- RETRYCOUNT undoes the increment of the janitor's own claim: only consumers count.
        redis.call('XCLAIM', source, group, consumer, 0, id, 'RETRYCOUNT', entry[4], 'JUSTID')
        result[5] = result[5] + 1
      else
        restore(id, entry)
        result[8] = result[8] + 1
      end
    end
  end
end

for first = 1, acknowledgeCount, 1000 do
  local last = math.min(first + 999, acknowledgeCount)
  redis.call('XACK', source, group, unpack(toAcknowledge, first, last))
end
-- The janitor's consumer owns nothing once the page is done; leaving it would show a phantom
-- consumer to every dashboard. Checked first, because DELCONSUMER discards pending entries.
if #redis.call('XPENDING', source, group, '-', '+', 1, janitor) == 0 then
  redis.call('XGROUP', 'DELCONSUMER', source, group, janitor)
end
result[9] = ghosts
return result
