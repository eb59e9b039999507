--[[
PROFILING REFERENCE, not used by the daemon: sweepPage.lua without XAUTOCLAIM.

Measured by `npm run bench -- --only=p` against the real src/redis/scripts/sweepPage.lua (this
file is that script as of commit eca0b6e with the claim taken out). Same keys, arguments and
reply; the whole test suite (169 tests) passes with it in place of the real one. The window read
by XPENDING already says which entries are idle, who owns them and how often they were
delivered, and the script is atomic, so requeue and dead-letter need no claim: read the window
with one entry of look-ahead (the next cursor, so a full last page still ends the pass), then
the bodies (one XRANGE over the window's span when it is dense, one XRANGE per id past a sparse
span), write the copies, XACK. Ids without a body are ghosts and are acknowledged, as XAUTOCLAIM
does on 7.0. Reassign XCLAIMs straight to the chosen consumer. Nothing is ever owned by the
janitor's consumer, so there is nothing to restore or delete.

KEYS[1]  source stream
KEYS[2]  requeue target stream (the source itself by default)
KEYS[3]  dead-letter stream
KEYS[4]  optional fence key (the lease key); when present it must hold ARGV[9] or nothing changes

ARGV[1]  group
ARGV[2]  the janitor's own consumer name (unused here: nothing is claimed)
ARGV[3]  min-idle in ms
ARGV[4]  cursor (a PEL id, inclusive; 0-0 to start)
ARGV[5]  page size: at most this many PEL entries are examined
ARGV[6]  maxDeliveries
ARGV[7]  action: requeue | reassign | dead-letter
ARGV[8]  dead-letter MAXLEN ~ cap
ARGV[9]  fence value (ignored without KEYS[4])
ARGV[10] number of reassign candidates that follow, best first
ARGV[11..] reassign candidates (live consumers of the group)

Returns { nextCursor, examined, claimed, requeued, reassigned, deadLetteredMaxDeliveries,
          deadLetteredAction, leftPending, ghostIds, oversizedIds }
Errors (nothing changed): FENCED, NOSTREAM, WRONGTYPE, NOGROUP.

Bodies stay inside Redis: Lua strings are byte strings, so fields are copied exactly, in order.
]]

local source, target, deadLetters = KEYS[1], KEYS[2], KEYS[3]
local group = ARGV[1]
local minIdle = tonumber(ARGV[3])
local cursor = ARGV[4]
local pageSize = tonumber(ARGV[5])
local maxDeliveries = tonumber(ARGV[6])
local action = ARGV[7]
local deadLetterMaxLen = ARGV[8]
local candidateCount = tonumber(ARGV[10])

if #KEYS >= 4 and redis.call('GET', KEYS[4]) ~= ARGV[9] then
  return redis.error_reply('FENCED the lease is not held by this process')
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

-- The window: owners, idle times and delivery counts.
local window = redis.pcall('XPENDING', source, group, cursor, '+', pageSize + 1)
if window.err then return redis.error_reply(window.err) end
-- One entry of look-ahead: it is the next cursor, and its absence says the pass is complete.
local nextCursor = '0-0'
if #window > pageSize then
  nextCursor = window[pageSize + 1][1]
  window[pageSize + 1] = nil
end
local windowSize = #window
if windowSize == 0 then
  return { '0-0', 0, 0, 0, 0, 0, 0, 0, {}, {} }
end

local idleInWindow = 0
for _, entry in ipairs(window) do
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

local result = { '0-0', 0, 0, 0, 0, 0, 0, 0, {}, {} }
if idleInWindow == 0 then
  result[2] = windowSize
  result[1] = nextCursor
  return result
end

-- Bodies: one XRANGE over the window's span gets them all when the span is dense (a crashed
-- consumer's backlog); if the span holds other entries too, ids past it are read one by one.
result[2] = windowSize
result[1] = nextCursor
local bodies = {}
local span = redis.call('XRANGE', source, window[1][1], window[windowSize][1], 'COUNT', windowSize)
for _, e in ipairs(span) do bodies[e[1]] = e[2] end
if #span == windowSize and span[#span][1] ~= window[windowSize][1] then
  local lastSeen = span[#span][1]
  for _, entry in ipairs(window) do
    if bodies[entry[1]] == nil and idBefore(lastSeen, entry[1]) then
      local one = redis.call('XRANGE', source, entry[1], entry[1])
      if one[1] then bodies[entry[1]] = one[1][2] end
    end
  end
end
local ghosts = {}

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

local function pickConsumer(owner)
  for i = 1, candidateCount do
    local candidate = ARGV[10 + i]
    if candidate ~= owner then return candidate end
  end
  return nil
end

for _, entry in ipairs(window) do if entry[3] >= minIdle then
  local id = entry[1]
  local fields = bodies[id]
  if not fields then
    -- Redis 6.2 returns deleted entries with a nil body and keeps them pending; 7.0 removes them.
    ghosts[#ghosts + 1] = id
    acknowledge(id)
  elseif #fields > maxFieldValues then
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
        -- JUSTID with RETRYCOUNT keeps the delivery count: only deliveries to consumers count.
        redis.call('XCLAIM', source, group, consumer, 0, id, 'RETRYCOUNT', entry[4], 'JUSTID')
        result[5] = result[5] + 1
      else
        result[8] = result[8] + 1
      end
    end
  end
end end

for first = 1, acknowledgeCount, 1000 do
  local last = math.min(first + 999, acknowledgeCount)
  redis.call('XACK', source, group, unpack(toAcknowledge, first, last))
end
result[9] = ghosts
return result
