#!lua
--[[
appendEvents: a batch of advisory events appended to the events stream in one call, so a storm
of events costs one round trip per batch instead of one XADD (and one TIME) per event. Redis TIME
is read once per call, and only when an event of the batch has no time of its own. Events are
advisory and written by every replica (a standby's status-changed, a leader's lease-lost after
its term ended): no fence. The type check comes before the first XADD, so a key of another type
writes nothing; the caller counts the whole batch lost and never retries it.

KEYS[1]  the events stream (events.stream)

ARGV[1]  maxLen: XADD MAXLEN ~ (events.maxLen)
ARGV[2]  by: the writer (hostname:pid)
ARGV[3..] seven values per event: type, at (Unix ms; "" = this call's Redis TIME), stream,
          group, count, ids (space-separated), detail (JSON)

Returns the number of entries added. Errors (nothing written): WRONGTYPE when the key holds
something other than a stream; ARGS when ARGV is not two values and whole events.
]]

local key = KEYS[1]
local kind = redis.call('TYPE', key)['ok']
if kind ~= 'stream' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE the events stream ' .. key .. ' holds a ' .. kind)
end
if #ARGV < 2 or (#ARGV - 2) % 7 ~= 0 then
  return redis.error_reply('ARGS appendEvents takes maxLen, by and seven values per event')
end

local maxLen = ARGV[1]
local by = ARGV[2]
local now = nil
local added = 0
for i = 3, #ARGV, 7 do
  local at = ARGV[i + 1]
  if at == '' then
    if now == nil then
      local time = redis.call('TIME')
      now = tostring(tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))
    end
    at = now
  end
  redis.call('XADD', key, 'MAXLEN', '~', maxLen, '*',
    'type', ARGV[i], 'at', at, 'by', by, 'stream', ARGV[i + 2], 'group', ARGV[i + 3],
    'count', ARGV[i + 4], 'ids', ARGV[i + 5], 'detail', ARGV[i + 6])
  added = added + 1
end
return added
