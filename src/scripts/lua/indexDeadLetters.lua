#!lua
--[[
indexDeadLetters: builds one page of a group's dead-letter index from its dead-letter stream.

Dead letters written before the index existed (by an older version, or while the index was being
rebuilt) are in the dead-letter stream only. This script reads the dead-letter stream page by page
from the cursor kept in the state hash and adds an index entry, at the dead letter's own id, for
each dead letter of this stream/group (x-original-stream, x-original-group): its x-* fields, no
body. The page that reaches the end of the stream marks the index complete, in the same call, so
no dead letter falls between: sweepPage.lua keeps the index only once it is complete, and dead
letters added meanwhile lie after the cursor. A crash between calls resumes at the cursor; a
state hash without a cursor starts over from an empty index.

KEYS[1]  dead-letter stream
KEYS[2]  the group's dead-letter index (src/core/deadLetterIndex.ts)
KEYS[3]  its state hash: complete = 1 once built; cursor = the last dead-letter id looked at
KEYS[4]  optional fence key, as in ensureRetryLane.lua (the source stream's slot)

ARGV[1]  source stream (x-original-stream of the group's dead letters)
ARGV[2]  group (x-original-group)
ARGV[3]  page size: dead letters looked at by this call
ARGV[4]  fence value, or 'token:<n>' on Cluster (ignored without KEYS[4])

Returns { complete, indexed }: complete 1 when the index is (now) complete; indexed, the index
entries this call added.
Errors (nothing changed): FENCED, WRONGTYPE.
Built and read by src/scripts/indexDeadLetters.ts. Included when loaded: includes/fence.lua,
metadata.lua.
]]

--- @include "fence"
--- @include "metadata"

local deadLetters, index, state = KEYS[1], KEYS[2], KEYS[3]
local source, group, pageSize = ARGV[1], ARGV[2], tonumber(ARGV[3])

local found = {}
for key, wanted in pairs({ [deadLetters] = 'stream', [index] = 'stream', [state] = 'hash' }) do
  local keyType = redis.call('TYPE', key)['ok']
  if keyType ~= wanted and keyType ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. keyType .. ', not a ' .. wanted)
  end
  found[key] = keyType ~= 'none'
end
if redis.call('HGET', state, 'complete') == '1' then return { 1, 0 } end

local fenced, fenceToken = checkDeclaredFence(4, ARGV[4], 'wrote here')
if fenced then return redis.error_reply('FENCED ' .. fenced) end
-- Checks passed (the XADDs below take ids in increasing order into a stream that only this
-- script writes until complete, emptied when the build starts: they cannot fail).
if fenceToken then redis.call('SET', KEYS[4], fenceToken) end

local cursor = redis.call('HGET', state, 'cursor')
if not cursor then
  redis.call('DEL', index)
  cursor = '0-0'
end
-- No dead-letter stream yet: nothing to read, the (empty) index is complete at once.
local page = found[deadLetters]
  and redis.call('XRANGE', deadLetters, '(' .. cursor, '+', 'COUNT', pageSize) or {}
local wanted = metadataNames(DEAD_LETTER_METADATA)
local indexed = 0
for _, entry in ipairs(page) do
  local fields, meta = entry[2], {}
  for i = 1, #fields, 2 do
    if wanted[fields[i]] then meta[fields[i]] = fields[i + 1] end
  end
  if meta['x-original-stream'] == source and meta['x-original-group'] == group then
    local args = { 'XADD', index, entry[1] }
    for _, name in ipairs(DEAD_LETTER_METADATA) do
      args[#args + 1] = name
      args[#args + 1] = meta[name] or ''
    end
    redis.call(unpack(args))
    indexed = indexed + 1
  end
end
if #page < pageSize then
  redis.call('HSET', state, 'complete', '1')
  redis.call('HDEL', state, 'cursor')
  return { 1, indexed }
end
redis.call('HSET', state, 'cursor', page[#page][1])
return { 0, indexed }
