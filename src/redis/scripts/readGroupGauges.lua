#!lua flags=no-writes
--[[
readGroupGauges: what one scrape needs about the configured groups of one stream, in one call,
from body-free commands only: TYPE, XLEN, XINFO GROUPS, XPENDING - + 1 and the XLEN of the
groups' dead-letter streams. No entry is ever read (XRANGE/XINFO STREAM would copy bodies into
Lua: about a second of Redis time for a 50 MB entry), so the cost does not depend on entry size.
Read-only (no-writes): runs on replicas, never fenced. The cost is one XINFO GROUPS plus one
XPENDING per configured group, the same commands a client would send, minus their round trips.

KEYS[1]      the stream
KEYS[2..]    dead-letter streams of some of the groups (those in the stream's hash slot)
ARGV[1]      n, the number of groups
ARGV[2..n+1] the group names
ARGV[n+2..2n+1] for each group, the KEYS index of its dead-letter stream, or 0 (read elsewhere)

Returns { 'no-stream' } or { 'wrong-type' } when KEYS[1] is not a stream; otherwise
{ 'ok', xlen, g1, ..., gn } where gi is {} when the group does not exist, else
{ pending, last-delivered-id, lag, oldest-id, oldest-idle-ms, oldest-deliveries, dead-letter-len }
with lag -1 when Redis reports it as null (or has none), oldest-id '' for an empty PEL, and
dead-letter-len -1 when not read here or not a stream (XLEN of a missing key is 0).
]]

local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return { 'no-stream' } end
if kind ~= 'stream' then return { 'wrong-type' } end

local byName = {}
for _, flat in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  local fields = {}
  for i = 1, #flat, 2 do fields[flat[i]] = flat[i + 1] end
  byName[fields['name']] = fields
end

local n = tonumber(ARGV[1])
local reply = { 'ok', redis.call('XLEN', KEYS[1]) }
for i = 1, n do
  local name = ARGV[1 + i]
  local fields = byName[name]
  if fields == nil then
    reply[#reply + 1] = {}
  else
    local oldest = redis.call('XPENDING', KEYS[1], name, '-', '+', 1)[1]
    local deadLetterLength = -1
    local keyIndex = tonumber(ARGV[1 + n + i])
    if keyIndex > 0 then
      local ok, length = pcall(redis.call, 'XLEN', KEYS[keyIndex])
      if ok then deadLetterLength = length end
    end
    -- lag is a number (7.0+), or false for null; entries-read may be missing on older servers.
    local lag = fields['lag']
    reply[#reply + 1] = {
      fields['pending'],
      fields['last-delivered-id'],
      type(lag) == 'number' and lag or -1,
      oldest and oldest[1] or '',
      oldest and oldest[3] or 0,
      oldest and oldest[4] or 0,
      deadLetterLength,
    }
  end
end
return reply
