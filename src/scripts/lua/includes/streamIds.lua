-- Stream ids (src/core/streamIds.ts), compared and stepped as decimal strings: Lua numbers are
-- doubles, exact only to 2^53, and both parts of an id go up to 2^64 - 1.
local MAX_ID_PART = '18446744073709551615'

local function splitId(id)
  local dash = string.find(id, '-', 1, true)
  return string.sub(id, 1, dash - 1), string.sub(id, dash + 1)
end
local function numberLess(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local function idLess(a, b)
  local aMs, aSeq = splitId(a)
  local bMs, bSeq = splitId(b)
  if aMs ~= bMs then return numberLess(aMs, bMs) end
  return numberLess(aSeq, bSeq)
end
local function increment(digits)
  local i = #digits
  while i > 0 and string.sub(digits, i, i) == '9' do i = i - 1 end
  if i == 0 then return '1' .. string.rep('0', #digits) end
  local digit = string.char(string.byte(digits, i) + 1)
  return string.sub(digits, 1, i - 1) .. digit .. string.rep('0', #digits - i)
end
-- The id right after `id`.
local function nextId(id)
  local ms, seq = splitId(id)
  if seq == MAX_ID_PART then return increment(ms) .. '-0' end
  return ms .. '-' .. increment(seq)
end
-- Whether a stream whose last id is `last` can take `count` (<= 551,616) more entries: one whose
-- last id has the largest millisecond part can take only as many as its sequence part allows
-- (XADD * fails after that). Exact on the digits, no float involved.
local function idsLeftFor(last, count)
  local ms, seq = splitId(last)
  if ms ~= MAX_ID_PART then return true end
  -- seq <= MAX_ID_PART; below 18446744073709000000 at least 551,616 ids are left.
  if #seq < 20 or string.sub(seq, 1, 14) ~= '18446744073709' then return true end
  return 551615 - tonumber(string.sub(seq, 15)) >= count
end
