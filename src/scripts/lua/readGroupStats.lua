#!lua flags=no-writes
--[[
readGroupStats: everything the scrape-time gauges need for a batch of groups, in one call, without
reading any entry (no XRANGE, XREVRANGE or XINFO STREAM, so the cost does not
depend on the size of the entries). It replaces four pipelined commands per group, whose client-side
cost (command objects, promises, encoding, decoding) dominated a scrape; the reply is flat and made
of numbers and short strings. Read-only; src/scripts/readGroupStats.ts builds the call and parses
the reply, and src/scrape/readGroupStatsScript.ts sends 100 groups per call so that one call stays
short in Redis (about 1.5 ms). It returns what Redis answered and applies no rule: the rules
(the consumers' activity, a retry lane's work) are in src/scripts/readGroupStatsParts.ts, shared
with the reads without scripts (src/README.md "The scrape's reads").

KEYS[1..S]        the distinct streams of the batch
KEYS[S+1..S+G]    the dead-letter stream of group 1..G
KEYS[S+G+1..]     the retry lanes of the groups that have one, then (with 'c' only) the touches
                  hashes of the reassign groups (consumer -> Unix ms of the janitor's last XCLAIM
                  to it, written by sweepPage.lua)
KEYS[last 2G]     per group g: its dead-letter index and the index's state hash
                  (src/core/deadLetterIndex.ts), at #KEYS - 2G + 2g - 1 and #KEYS - 2G + 2g

ARGV[1]  1: also read the XPENDING summary (per-consumer counts); 0: not. Followed by 'c' ('0c',
         '1c') for the group status: also entries-read and XINFO CONSUMERS per group. A scrape
         sends no 'c' and costs what it cost before the status existed.
ARGV[2]  S, the number of streams
ARGV[3i], ARGV[3i+1], ARGV[3i+2]  group i: the index (1..S) of its stream in KEYS, its name, the
                                  index of its retry lane in KEYS (0: none)
with 'c' only, after the groups: per group i, the index of its touches hash in KEYS (0: none)

Returns a flat array:
  timeSeconds, timeMicroseconds                   Redis TIME
  per stream: error, length                       error '' when XINFO GROUPS worked, else its
                                                  message (ERR no such key, WRONGTYPE ...); length
                                                  0 then
  per group: status, then with status '' only:
    pending, lastDeliveredId, lag (-1: null or absent),
    oldestId ('' when the PEL is empty), oldestIdleMs, oldestDeliveries,
    deadLetterLength (-1: XLEN failed, e.g. the key is not a stream),
    retryLaneLength (-1: no retry lane, or XLEN failed),
    with a retry lane only (laneFacts): the error of its XINFO GROUPS ('' none), its group's
    pending (-1: no such group), lag (-1: null), oldest pending id ('' none or not read), its
    idle ms and deliveries,
    consumerCount n, then n pairs consumer, pending (n is 0 without ARGV[1] = 1),
    then with 'c' only: entriesRead (-1: null or absent), a count k and k pairs consumer, idle
    (XINFO CONSUMERS), a count t and t pairs consumer, Unix ms (the touches hash; 0 without
    one, or when it cannot be read),
    then: deadLetters, the XLEN of the group's dead-letter index (its own dead letters, exact
    whatever else shares the dead-letter stream), and 1 when that index is complete, else 0
    (still being built: the count is a lower bound)
  status: '' read; 'S' the stream could not be read (see its error); 'G' no such group on the
  stream; anything else: the error message of the XPENDING that failed.
]]

local perConsumer = string.sub(ARGV[1], 1, 1) == '1'
local withConsumers = string.sub(ARGV[1], 2, 2) == 'c'
local streamCount = tonumber(ARGV[2])
local out = {}
local n = 0
local function push(value)
  n = n + 1
  out[n] = value
end

local time = redis.call('TIME')
push(time[1])
push(time[2])

local function failed(reply)
  return type(reply) == 'table' and reply.err ~= nil
end

-- Per stream: the groups XINFO GROUPS reports, by name, or nil when it failed.
local groupsOf = {}
for s = 1, streamCount do
  local reply = redis.pcall('XINFO', 'GROUPS', KEYS[s])
  if failed(reply) then
    push(reply.err)
    push(0)
  else
    local byName = {}
    for _, fields in ipairs(reply) do
      local info = {}
      for f = 1, #fields, 2 do
        info[fields[f]] = fields[f + 1]
      end
      byName[info['name']] = info
    end
    groupsOf[s] = byName
    push('')
    push(redis.call('XLEN', KEYS[s]))
  end
end

local groupCount = withConsumers and (#ARGV - 2) / 4 or (#ARGV - 2) / 3
local indexBase = #KEYS - 2 * groupCount

-- What the group's retry lane answered: its XINFO GROUPS error ('' none), the lane's group's
-- pending count (-1: no such group), lag (-1: null), and its oldest pending entry, read only
-- when something is pending there.
local function laneFacts(lane, name)
  local pendingCount, lag, oldest = -1, -1, nil
  local groups = redis.pcall('XINFO', 'GROUPS', lane)
  if failed(groups) then
    push(groups.err)
  else
    push('')
    for _, fields in ipairs(groups) do
      local info = {}
      for f = 1, #fields, 2 do info[fields[f]] = fields[f + 1] end
      if info['name'] == name then
        pendingCount = tonumber(info['pending'])
        lag = info['lag'] and tonumber(info['lag']) or -1
      end
    end
    if pendingCount > 0 then
      local page = redis.pcall('XPENDING', lane, name, '-', '+', 1)
      if not failed(page) then oldest = page[1] end
    end
  end
  push(pendingCount)
  push(lag)
  push(oldest and oldest[1] or '')
  push(oldest and tonumber(oldest[3]) or 0)
  push(oldest and tonumber(oldest[4]) or 0)
end

-- Pushes a count and the pairs of a flat name/value list.
local function pushPairs(flat)
  push(#flat / 2)
  for i = 1, #flat, 2 do
    push(flat[i])
    push(tonumber(flat[i + 1]))
  end
end

-- The touches hash of group g (consumer -> Unix ms of the janitor's last XCLAIM to it).
local function pushTouches(g)
  local t = tonumber(ARGV[2 + 3 * groupCount + g])
  local flat = t > 0 and redis.pcall('HGETALL', KEYS[t]) or {}
  pushPairs(failed(flat) and {} or flat)
end

for g = 1, groupCount do
  local s = tonumber(ARGV[3 * g])
  local name = ARGV[3 * g + 1]
  local lane = tonumber(ARGV[3 * g + 2])
  local stream = KEYS[s]
  local byName = groupsOf[s]
  local info = byName and byName[name]
  if byName == nil then
    push('S')
  elseif info == nil then
    push('G')
  else
    local oldest = redis.pcall('XPENDING', stream, name, '-', '+', 1)
    local summary = nil
    if perConsumer and not failed(oldest) then
      summary = redis.pcall('XPENDING', stream, name)
    end
    local seen = nil
    if withConsumers and not failed(oldest) and not failed(summary) then
      seen = redis.pcall('XINFO', 'CONSUMERS', stream, name)
    end
    if failed(oldest) then
      push(oldest.err)
    elseif failed(summary) then
      push(summary.err)
    elseif seen and failed(seen) then
      push(seen.err)
    else
      push('')
      push(tonumber(info['pending']))
      push(info['last-delivered-id'])
      local lag = info['lag']
      push(lag and tonumber(lag) or -1)
      local first = oldest[1]
      if first then
        push(first[1])
        push(tonumber(first[3]))
        push(tonumber(first[4]))
      else
        push('')
        push(0)
        push(0)
      end
      local deadLetter = redis.pcall('XLEN', KEYS[streamCount + g])
      push(failed(deadLetter) and -1 or deadLetter)
      local laneLength = lane > 0 and redis.pcall('XLEN', KEYS[lane]) or -1
      push(failed(laneLength) and -1 or laneLength)
      if lane > 0 then laneFacts(KEYS[lane], name) end
      local consumers = summary and summary[4]
      if consumers then
        push(#consumers)
        for _, pair in ipairs(consumers) do
          push(pair[1])
          push(tonumber(pair[2]))
        end
      else
        push(0)
      end
      if seen then
        local entriesRead = info['entries-read']
        push(entriesRead and tonumber(entriesRead) or -1)
        local idles = {}
        for _, fields in ipairs(seen) do
          -- name, pending, idle[, inactive]: a flat field/value list per consumer
          local consumer, idle = nil, nil
          for f = 1, #fields, 2 do
            if fields[f] == 'name' then
              consumer = fields[f + 1]
            elseif fields[f] == 'idle' then
              idle = fields[f + 1]
            end
          end
          if consumer and idle then
            idles[#idles + 1] = consumer
            idles[#idles + 1] = idle
          end
        end
        pushPairs(idles)
        pushTouches(g)
      end
      local indexKey, stateKey = KEYS[indexBase + 2 * g - 1], KEYS[indexBase + 2 * g]
      local indexed = redis.pcall('XLEN', indexKey)
      push(failed(indexed) and -1 or indexed)
      local complete = redis.pcall('HGET', stateKey, 'complete')
      push(complete == '1' and 1 or 0)
    end
  end
end
return out
