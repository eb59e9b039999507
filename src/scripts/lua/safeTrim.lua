#!lua
--[[
safeTrim: trims one page from the head of a stream without removing anything a group still needs.

The floor is the oldest id any consumer group of the stream still needs, whether or not the
janitor is configured for it: the smaller of its oldest pending id (XPENDING summary) and the
first id after its last-delivered-id. The retention policy (keep at most maxLen entries, drop
entries older than maxAgeMs) asks to remove a prefix of the stream; at most pageSize entries are
looked at per call, so one call stays short. The removal stops at the floor, and XTRIM MINID with
that exact id removes nothing at or after it: no pending entry loses its body (no ghosts) and no
group misses an entry it has not read yet. The floor and the trim are in one script, so no reader
can move between them. A stream without groups has no floor.

KEYS[1]  stream
KEYS[2]  optional fence key (src/sweep/slotFence.ts). One server: the lease key, which must hold
         ARGV[5] or nothing changes. Redis Cluster (ARGV[5] is 'token:<n>'): a key in the
         stream's slot holding the highest fencing token that wrote there; a lower n changes
         nothing, a higher one is stored before the first write

ARGV[1]  maxLen: keep at most this many entries (-1: no limit)
ARGV[2]  maxAgeMs: remove entries older than this, on the Redis clock (0: no limit)
ARGV[3]  pageSize: at most this many entries are removed per call
ARGV[4]  1: dry run (count, write nothing); 0: trim
ARGV[5]  fence value, or 'token:<n>' on Cluster (ignored without KEYS[2])
ARGV[6]  dry run only: entries counted by earlier calls (0 otherwise)
ARGV[7]  dry run only: id after which this page starts (exclusive); '-' otherwise

Returns { removed, wanted, lastRemovedId, floor, blockers, more }:
  removed        entries removed (or, in a dry run, that would be)
  wanted         entries of this page the policy wanted removed (removed < wanted: held back)
  lastRemovedId  the last id removed, '' when none (the next dry-run page starts after it)
  floor          the oldest id some group needs, '' when no group needs anything
  blockers       flat { group, neededFromId, ... }: the groups that held the policy back
  more           1 when the policy may want more beyond this page (call again)
Errors (nothing changed): FENCED, WRONGTYPE.
Built and read by src/scripts/safeTrim.ts. Included when loaded: includes/fence.lua, streamIds.lua,
groupNeeds.lua.
]]

--- @include "fence"
--- @include "streamIds"
--- @include "groupNeeds"

local stream = KEYS[1]
local maxLen, maxAgeMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local pageSize = tonumber(ARGV[3])
local dryRun = ARGV[4] == '1'
local counted = tonumber(ARGV[6]) or 0
local start = ARGV[7] or '-'

-- The fence (includes/fence.lua): refused, or the token to store before the first write.
local fenced, fenceToken = checkDeclaredFence(2, ARGV[5], 'wrote here')
if fenced then return redis.error_reply('FENCED ' .. fenced) end
local keyType = redis.call('TYPE', stream)['ok']
if keyType == 'none' then return { 0, 0, '', '', {}, 0 } end
if keyType ~= 'stream' then
  return redis.error_reply('WRONGTYPE ' .. stream .. ' holds a ' .. keyType .. ', not a stream')
end

-- Checks passed: this stream is now maintained under our token (see the fence above).
if fenceToken and not dryRun then redis.call('SET', KEYS[2], fenceToken) end
-- Ids are compared and stepped as decimal strings (idLess, nextId: includes/streamIds.lua).

-- The policy: how many entries of this page it wants gone (both limits cut a prefix).
local rangeStart = start
if start ~= '-' then rangeStart = '(' .. start end
local page = redis.call('XRANGE', stream, rangeStart, '+', 'COUNT', pageSize)
local wanted = 0
if maxLen >= 0 then
  local excess = redis.call('XLEN', stream) - counted - maxLen
  if excess > 0 then wanted = math.min(excess, #page) end
end
if maxAgeMs > 0 then
  local now = redis.call('TIME')
  local cutoffMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - maxAgeMs
  local cutoff = string.format('%d-0', cutoffMs)
  local old = 0
  while old < #page and idLess(page[old + 1][1], cutoff) do old = old + 1 end
  if old > wanted then wanted = old end
end

-- The floor: what every group of the stream still needs (includes/groupNeeds.lua).
local floor, needs = groupNeeds(stream)

local removed = wanted
local blockers = {}
if wanted > 0 and floor ~= nil then
  local target = nextId(page[wanted][1])
  if idLess(floor, target) then
    for _, need in ipairs(needs) do
      if idLess(need[2], target) then
        blockers[#blockers + 1] = need[1]
        blockers[#blockers + 1] = need[2]
      end
    end
    removed = 0
    while removed < wanted and idLess(page[removed + 1][1], floor) do removed = removed + 1 end
  end
end

local lastRemovedId = ''
if removed > 0 then
  lastRemovedId = page[removed][1]
  if not dryRun then
    redis.call('XTRIM', stream, 'MINID', '=', nextId(lastRemovedId))
  end
end
local more = 0
if removed == wanted and wanted == #page and wanted > 0 then more = 1 end
return { removed, wanted, lastRemovedId, floor or '', blockers, more }
