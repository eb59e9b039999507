-- sweepPage.lua's carried counts, and the backoff test that reads them.
--
-- Backoff needs the deliveries a requeued copy carries (x-delivery-count), which sit in its body
-- with the user's fields: reading a 5 MB body costs about 35 ms. So the script that writes a copy
-- also records its id and count in a sorted set of the stream it goes to and of this group, and
-- the backoff test looks the count up there, no body read. All scores are 0; members are ordered
-- by their text: `<ms>-<seq>:<count>`, both parts of the id zero-padded to 20 digits, so text
-- order is id order. The watermark `from:<id>` (after every padded id) is the last id of the
-- millisecond the set was started in (Redis TIME): every copy above it has its record, so an
-- entry above it without one is no copy of this janitor (an original, a redriven copy: 0); one
-- below it (written before counts were kept) is read once and recorded. (The stream's last id
-- would be exact, but only XINFO STREAM tells it, with two entries whole; an entry above `now`,
-- written with an explicit id, is taken for new.) The set is started by a call with backoff
-- configured; once it exists every copy written here is recorded, backoff or not, so that it
-- never says 0 for a copy. Records leave it when the sweep acknowledges their copy, and below the
-- group's oldest pending entry at the start of each pass (what is below was acknowledged).
--
-- Without backoff nothing here runs per entry, and the sets are not read: only whether they
-- exist, known from the type checks.
-- Uses, declared by sweepPage.lua before it: call, source, action, carriedKey, targetCarriedKey,
-- exists (the keys found), backoff, startedUs, claimIdle, alwaysDue, maxDeliveries, tiers,
-- tierCount, spread; MAX_ID_PART (streamIds), dueAfter (backoff), canonicalCount, countText,
-- earlierDeliveries (sweepCounts).

local WATERMARK = 'from:'
local function padded(id)
  local dash = string.find(id, '-', 1, true)
  return string.rep('0', 21 - dash) .. string.sub(id, 1, dash - 1) .. '-' ..
    string.rep('0', 20 - #id + dash) .. string.sub(id, dash + 1)
end

-- Returns carriedKept (records of acknowledged copies are removed from carriedKey),
-- carriedFrom (the watermark, padded; nil: none, or no backoff) and recordCopies (each requeued
-- copy is recorded in targetCarriedKey). Starts the group's set when backoff is configured.
local function openCarriedCounts()
  if backoff and not exists[carriedKey] then
    local nowMs = string.format('%d', math.floor(startedUs / 1000))
    redis.call('ZADD', carriedKey, 0, WATERMARK .. padded(nowMs .. '-' .. MAX_ID_PART))
    exists[carriedKey] = true
  end
  local kept = exists[carriedKey] == true
  local from = nil
  if backoff then
    local found = redis.call('ZRANGEBYLEX', carriedKey, '[' .. WATERMARK, '+', 'LIMIT', 0, 1)[1]
    from = found and string.sub(found, #WATERMARK + 1)
  end
  return kept, from, action == 'requeue' and exists[targetCarriedKey] == true
end
local carriedKept, carriedFrom, recordCopies = openCarriedCounts()

-- The deliveries the entry `id` carries from earlier incarnations: its record, or (written before
-- counts were kept) its body's x-delivery-count, read once and recorded.
local function carriedDeliveries(id)
  local key = padded(id)
  local found = call('ZRANGEBYLEX', carriedKey, '[' .. key .. ':', '(' .. key .. ';', 'LIMIT', 0, 1)[1]
  if found then return tonumber(string.sub(found, #key + 2)) end
  if carriedFrom and key > carriedFrom then return 0 end -- written since: not a copy of ours
  local read = redis.call('XRANGE', source, id, id)[1]
  if not read then return 0 end -- a ghost: reported once its run is read or claimed
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

-- Backoff: an entry idle past claimIdle but not past its own threshold is waiting. Its idle time
-- in this window's copy of its XPENDING line is set to -1, so that the runs split around it:
-- never claimed nor touched (only claimed entries' lines are used to put entries back). Below
-- claimIdle or from alwaysDue on, the answer needs no per-entry threshold. The tier follows
-- every delivery so far, as maxDeliveries does: a requeued copy (or a retry lane's) carries its
-- earlier deliveries (carriedDeliveries), looked up only for entries in between.
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

-- What an entry that is not plain carries from its earlier incarnations: the first one's id, the
-- deliveries so far (its x-delivery-count, plus `deliveries`, this incarnation's), and its record
-- in the carried counts, to forget once it is acknowledged (nil: none kept, or no trusted count).
local function earlierIncarnations(id, fields, deliveries)
  local originalId, countValue = id, nil
  for i = 1, #fields, 2 do
    local name = fields[i]
    if name == 'x-original-id' then
      originalId = fields[i + 1]
    elseif name == 'x-delivery-count' then
      countValue = fields[i + 1]
    end
  end
  local forget = nil
  if carriedKept and countValue and canonicalCount(countValue) then
    forget = padded(id) .. ':' .. countValue -- its record, if it has one
  end
  return originalId, earlierDeliveries(id, countValue) + deliveries, forget
end
