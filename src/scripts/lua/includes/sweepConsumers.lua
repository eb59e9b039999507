-- sweepPage.lua's view of the group's consumers: who is live (the reassign candidates, and the
-- owners whose entries were claimed while they were at work), the round robin over candidates,
-- and the consumers the call touched.
--
-- Seen is XINFO CONSUMERS `idle`, the time since the consumer's last attempted read, on every
-- version; not `inactive` (7.2+), which counts from its last successful read and is -1 for a
-- consumer that polls but has never received an entry, though it may be blocked in XREADGROUP
-- right now. An XCLAIM to a consumer resets its idle time too (7.0 and 7.2+ alike), so the
-- janitor's own claims must not pass for a sign of life: a consumer counts as live only if it was
-- seen within minIdle AND after the janitor last touched it.
-- Uses, declared by sweepPage.lua before it: source, group, janitor, touchesKey, minIdle,
-- rotation, action, startedUs, nowUs, unpack, claimedAny.

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

-- The owners of `live` as a set (name -> true), or false when there are none.
local function activeOwnerSet(live)
  local set, any = {}, false
  for _, consumer in ipairs(live) do
    set[consumer[1]] = true
    any = true
  end
  return any and set
end

-- Owners that read from the group within minIdle, or false when none did: an entry claimed from
-- one of them was still being worked on, most likely, so minIdleMs is too low
-- (claimedFromActiveConsumer). nil until the call's first claim is settled: read once per call,
-- and only by calls that claim something (reassign reads it with its candidates).
local activeOwners = nil

-- The reassign candidates' names, most recently seen first (read only under reassign).
local function reassignCandidates()
  local live = liveConsumers()
  local names = {}
  for i, entry in ipairs(live) do names[i] = entry[1] end
  activeOwners = activeOwnerSet(live)
  return names
end
local candidates = action == 'reassign' and reassignCandidates() or {}

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

-- After the writes, so every XCLAIM of this call happened at or before the recorded time: the
-- consumers touched, with the time. A record matters only until the consumer's idle time passes
-- minIdle anyway.
local function recordTouches()
  if touchedCount == 0 then return end
  local endMs = string.format('%d', math.floor(nowUs() / 1000))
  local args = { 'HSET', touchesKey }
  for consumer in pairs(touched) do
    args[#args + 1] = consumer
    args[#args + 1] = endMs
  end
  redis.call(unpack(args))
  redis.call('PEXPIRE', touchesKey, 2 * minIdle + 1000)
end

-- The janitor's consumer owns nothing once the call is done; leaving it would show a phantom
-- consumer to every dashboard. Checked first, because DELCONSUMER discards pending entries.
local function dropJanitorConsumer()
  if claimedAny and #redis.call('XPENDING', source, group, '-', '+', 1, janitor) == 0 then
    redis.call('XGROUP', 'DELCONSUMER', source, group, janitor)
  end
end
