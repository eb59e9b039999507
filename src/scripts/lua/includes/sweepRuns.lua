-- sweepPage.lua's windows and runs: which entries of a PEL window are due, the runs of due
-- entries next to each other, their bodies' read (requeue, dead-letter) or claim (XAUTOCLAIM),
-- each entry handed to handle(), and the recovery from an unforeseen error.
-- Uses, declared by sweepPage.lua before it: source, group, janitor, claimIdle, maxDeliveries,
-- backoff, action, result, handle, nowUs, startedUs, call, unpack, NONE, cursor, the call's
-- limits (maxClaimed, maxExamined, firstWindow, budgetUs), the tallies (claimedCount,
-- oversizedCount, ghosts, acks, records, forgotten and their counts), failure, claimedAny,
-- claimedEntries; idLess (streamIds); activeOwners, activeOwnerSet, liveConsumers
-- (sweepConsumers); markWaiting, padded, carriedKept (sweepCarried); restore (sweepActions).

-- The claimed entries of the last XAUTOCLAIM, and how many of them are handled.
local claiming, handledCount = NONE, 0

-- Accounts for the claimed entries and deleted ids of an XAUTOCLAIM that did not claim the
-- whole run in order: both come back in PEL order and are matched against the run in one pass,
-- without a lookup table. Returns the position after the last entry accounted for.
local function settleUnusual(window, first, last, items, deleted)
  local deletedCount = 0
  local position = first
  while position <= last do
    local entry = window[position]
    local id = entry[1]
    local item = items[handledCount + 1]
    if item and item[1] == id then
      local fields = item[2] or {}
      handle(id, fields, entry)
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

-- Accounts for one XAUTOCLAIM over the run window[first..last] (due entries next to each other
-- in the PEL): its claimed entries (`items`: id and fields) and its deleted ids; each claimed
-- entry is handled. Returns the position after the last one accounted for.
local function settle(window, first, last, items, deleted)
  claiming, handledCount, claimedEntries = items, 0, true
  -- Once per call, before the first claimed entry is handled (and before anything is put back).
  if activeOwners == nil then activeOwners = activeOwnerSet(liveConsumers()) end
  local itemCount = #items
  if itemCount ~= last - first + 1 or deleted[1] ~= nil then
    return settleUnusual(window, first, last, items, deleted)
  end
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

-- Bodies in one sequential read, nothing claimed. A requeue or a dead-letter acknowledges the
-- original in the call that copies it, so the entry need not change hands: its XPENDING line
-- gives its owner and delivery count (the copy carries that count; a claim's increment would
-- never be read), one XRANGE over the run's span the bodies (a crashed consumer's batch lies
-- next to each other in the stream), and nothing is put back after an error. An id the read
-- passes over is a ghost: acknowledged (out of the PEL, as XAUTOCLAIM does on 7.0+) and
-- reported. The first RANGE_PROBE entries of a run are read first: when other entries lie
-- between them, the call claims as usual from then on (XAUTOCLAIM with the bodies), since
-- reading past other entries costs as much as the lookups it saves. Reassign claims as usual:
-- the claim's increment is the hand-off's delivery.
local rangeReads = action == 'requeue' or action == 'dead-letter'
local RANGE_PROBE = 32

-- A ghost of a run read with XRANGE: reported, and acknowledged with the window's writes.
local function ghostRead(id)
  ghostCount = ghostCount + 1
  ghosts[ghostCount] = id
  ackCount = ackCount + 1
  acks[ackCount] = id
end

-- Reads the bodies of window[first..last] (due entries next to each other in the PEL) with one
-- XRANGE of at most as many entries, from the first id to the last, and handles each entry it
-- returns. Walks both lists in id order: a read id below the run's next one is another entry
-- (not adjacent: reads stop being used), one above it means the run's id is a ghost; past the
-- read's end, the rest are ghosts when the span was read to its end. Returns the position after
-- the last entry accounted for (at least `first`'s).
local function readRun(window, first, last)
  if activeOwners == nil then activeOwners = activeOwnerSet(liveConsumers()) end
  local size = last - first + 1
  local chunk = call('XRANGE', source, window[first][1], window[last][1], 'COUNT', size)
  local readCount, j, k = #chunk, 1, first
  claiming, handledCount, claimedEntries = NONE, 0, false
  while k <= last do
    local entry, read = window[k], chunk[j]
    local id = entry[1]
    if read and read[1] == id then
      handle(id, read[2], entry)
      j, k = j + 1, k + 1
    elseif read and idLess(read[1], id) then
      rangeReads = false -- another entry between the run's: passed over
      j = j + 1
    elseif read or readCount < size then
      ghostRead(id)
      k = k + 1
    else
      return k -- the read stopped at its COUNT before this id
    end
  end
  return k
end

-- One run: read (requeue, dead-letter) or one XAUTOCLAIM with COUNT the length of the run (each
-- idle or deleted entry uses one up, so the claim never reaches past the run, whose owners are
-- known, nor scans fresh entries). `runIdle` is its min-idle: claimIdle, or 0 when the run
-- holds a passed entry that is not idle (every entry of a run is due, and nothing else runs
-- inside the script, so 0 claims exactly the run). Returns the position after the last entry it
-- accounted for.
local function sweepRun(window, first, last, runIdle)
  if rangeReads then
    local position = readRun(window, first, math.min(last, first + RANGE_PROBE - 1))
    if rangeReads and position <= last then position = readRun(window, position, last) end
    return position
  end
  claimedAny = true
  local reply = redis.call('XAUTOCLAIM', source, group, janitor, runIdle, window[first][1],
    'COUNT', last - first + 1)
  return settle(window, first, last, reply[2], reply[3] or NONE)
end

-- Due: idle at least claimIdle (minIdle without backoff), or passed: delivered more than
-- maxDeliveries times (the PEL's own count, no body read), whatever its idle time and tier. A
-- consumer that re-reads its own PEL resets the idle time of a failing entry at each read: only
-- its count shows it. At maxDeliveries it may still be in its last allowed delivery. (Written
-- out below where it runs per entry.)

-- How many of the window's first `size` entries to examine (it ends before its
-- (claimLimit + 1)-th due entry), how many of those are due, and how many of the due ones are
-- not idle (passed ones, which XAUTOCLAIM claims only with min-idle 0).
local function countDue(window, size, claimLimit)
  local examined = math.min(#window, size)
  if backoff then markWaiting(window, examined) end
  local dueCount, notIdle = 0, 0
  for i = 1, examined do
    local entry = window[i]
    local idle = entry[3] >= claimIdle
    if idle or entry[4] > maxDeliveries then
      if dueCount == claimLimit then return i - 1, dueCount, notIdle end
      dueCount = dueCount + 1
      if not idle then notIdle = notIdle + 1 end
    end
  end
  return examined, dueCount, notIdle
end

-- The last position of the run of due entries that starts at `first`, and its min-idle.
local function runFrom(window, first, examined, allDue, notIdle)
  local last = examined -- every entry due: one run, the usual case of a stuck PEL
  if not allDue then
    last = first
    while last < examined do
      local after = window[last + 1]
      if after[3] < claimIdle and after[4] <= maxDeliveries then break end
      last = last + 1
    end
  end
  if notIdle > 0 then
    for i = first, last do
      if window[i][3] < claimIdle then return last, 0 end
    end
  end
  return last, claimIdle
end

-- Claims and handles every run of due entries among the window's first `examined`.
local function claimRuns(window, examined, dueCount, notIdle)
  local first = 1
  while first <= examined do
    local entry = window[first]
    if entry[3] >= claimIdle or entry[4] > maxDeliveries then
      local last, runIdle = runFrom(window, first, examined, dueCount == examined, notIdle)
      first = sweepRun(window, first, last, runIdle)
    else
      first = first + 1
    end
  end
end

-- Only to recover from an unforeseen error: the XPENDING line of a claimed id.
local function lineOf(window, id)
  for i = 1, #window do
    if window[i][1] == id then return window[i] end
  end
  return nil
end

-- After an unforeseen error: every copy is kept with its acknowledgement (acknowledge() runs
-- next), every other claimed entry is put back. Returns the error's message.
local function putBackUnhandled(window, err)
  for i = handledCount + 1, #claiming do
    local entry = lineOf(window, claiming[i][1])
    if entry then pcall(restore, entry) end
  end
  return type(err) == 'table' and (err.err or tostring(err)) or tostring(err)
end

-- The call's writes that wait for the end of a window: the acknowledgements, and the carried
-- counts' records of the copies written and of the originals acknowledged.
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

-- One window: claims its due entries (at most `claimLimit`) and handles them. Returns the
-- number of entries examined, and the time its claims ended (nil when nothing was due).
local function sweepWindow(window, size, claimLimit)
  local examined, dueCount, notIdle = countDue(window, size, claimLimit)
  if dueCount == 0 then return examined end
  local claimStartedUs = nowUs()
  local ok, err = pcall(claimRuns, window, examined, dueCount, notIdle)
  if not ok then failure = putBackUnhandled(window, err) end
  claiming, handledCount = NONE, 0
  acknowledge()
  local endedUs = nowUs()
  result.claimUs = result.claimUs + endedUs - claimStartedUs
  return examined, endedUs
end

-- The windows, from the cursor on, while the call's limits and budget last: each window is as
-- large as the rest of the budget allows at the cost per entry seen so far. Moves the cursor.
local function sweepWindows()
  local loopStartedUs = nowUs()
  local windowSize = math.min(math.max(firstWindow, 1), maxExamined)
  while failure == nil do
    local claimLimit = maxClaimed - claimedCount - oversizedCount
    local examineLimit = maxExamined - result.examined
    if claimLimit <= 0 or examineLimit <= 0 then return end
    local size = math.min(windowSize, examineLimit)
    local window = redis.call('XPENDING', source, group, cursor, '+', size + 1)
    result.windows = result.windows + 1
    if carriedKept and cursor == '0-0' and window[1] then
      -- A pass starts at the oldest pending entry: every copy below it was acknowledged.
      redis.call('ZREMRANGEBYLEX', carriedKey, '-', '(' .. padded(window[1][1]))
    end
    local examined, claimsEndedUs = sweepWindow(window, size, claimLimit)
    result.examined = result.examined + examined
    if examined >= #window then
      cursor = '0-0'
      return
    end
    cursor = window[examined + 1][1]
    local now = claimsEndedUs or nowUs()
    local perEntryUs = (now - loopStartedUs) / math.max(result.examined, 1)
    windowSize = math.min(10000, math.floor((budgetUs - (now - startedUs)) / math.max(perEntryUs, 0.05)))
    if windowSize < 16 then return end
  end
end
