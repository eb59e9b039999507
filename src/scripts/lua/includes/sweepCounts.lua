-- sweepPage.lua's delivery counts: x-delivery-count as read from a copy and as written on one.
-- Uses, declared by sweepPage.lua before it: result, invalidCountIds, MAX_REPORTED_IDS.

-- A count as written in x-delivery-count: only a canonical decimal integer is trusted (nil else).
local function canonicalCount(value)
  if #value <= 15 and string.find(value, '^%d+$') and (value == '0' or string.byte(value, 1) ~= 48) then
    return tonumber(value)
  end
  return nil
end

-- Deliveries recorded by earlier incarnations; an untrusted value counts 0 and is reported.
local function earlierDeliveries(id, value)
  if value == nil then return 0 end
  local count = canonicalCount(value)
  if count then return count end
  result.invalidCounts = result.invalidCounts + 1
  if #invalidCountIds < MAX_REPORTED_IDS then invalidCountIds[#invalidCountIds + 1] = id end
  return 0
end

-- Delivery counts as text, formatted once per value (callers look in countTexts first).
local countTexts = {}
local function countText(count)
  local text = countTexts[count]
  if not text then
    text = string.format('%d', count)
    countTexts[count] = text
  end
  return text
end
