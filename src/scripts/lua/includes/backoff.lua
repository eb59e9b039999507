-- Backoff tiers (backoffMs, backoffJitter): the idle time from which a pending entry is due.
-- src/core/backoffThreshold.ts is the exact TypeScript mirror (a test runs both over many ids);
-- change both together. Every step is an integer operation on values below 2^41, exact in
-- doubles; the id is read as text, only the last 6 digits of each of its parts are used.

-- The entry's jitter in thousandths, in [-spread, spread], a fixed function of its id.
local function jitterOffset(id, spread)
  local dash = string.find(id, '-', 1, true)
  local msLow = tonumber(string.sub(id, math.max(1, dash - 6), dash - 1))
  local seqLow = tonumber(string.sub(id, math.max(dash + 1, #id - 5)))
  local mixed = (msLow * 7919 + seqLow * 104729) % 1000003
  local scrambled = (mixed * 48271) % 2147483647
  return scrambled % (2 * spread + 1) - spread
end

-- `tiers`: max(minIdleMs, backoffMs[k]) per tier (tierCount of them); `spread`: the jitter in
-- thousandths. The threshold of an entry delivered `deliveries` times.
local function dueAfter(tiers, tierCount, spread, id, deliveries)
  local tier = deliveries
  if tier < 1 then tier = 1 elseif tier > tierCount then tier = tierCount end
  local base = tiers[tier]
  if spread == 0 then return base end
  return math.floor(base * (1000 + jitterOffset(id, spread)) / 1000)
end

-- The tiers from their ARGV form (comma-separated integers), the lowest threshold any entry can
-- have (what XAUTOCLAIM is given as min-idle, so that it claims every due entry of a run), and
-- the highest (an entry idle that long is due whatever its id and count: nothing to compute).
local function parseTiers(text, spread)
  local tiers, count, lowest, highest = {}, 0, nil, 0
  for value in string.gmatch(text, '%d+') do
    count = count + 1
    tiers[count] = tonumber(value)
    if not lowest or tiers[count] < lowest then lowest = tiers[count] end
    if tiers[count] > highest then highest = tiers[count] end
  end
  return tiers, count, math.floor((lowest or 0) * (1000 - spread) / 1000),
    math.floor(highest * (1000 + spread) / 1000)
end
