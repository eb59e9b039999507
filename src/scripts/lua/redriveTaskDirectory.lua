#!lua
--[[
redriveTaskDirectory: adds task keys to the directory of redrive tasks, or removes them (the
directory is a sorted set, src/core/redriveTask.ts). Both are idempotent.

KEYS[1]  the directory
ARGV[1]  'add' or 'remove'
ARGV[2]  add: the score (the start time, Unix ms); remove: ignored
ARGV[3...]  the task keys

Returns the number of members added or removed.
Errors (nothing changed): WRONGTYPE (the directory holds another type).
]]

local directory = KEYS[1]
local keyType = redis.call('TYPE', directory)['ok']
if keyType ~= 'zset' and keyType ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. directory .. ' holds a ' .. keyType .. ', not a zset')
end
if #ARGV < 3 then return 0 end
if ARGV[1] == 'add' then
  local args = { 'ZADD', directory }
  for i = 3, #ARGV do
    args[#args + 1] = ARGV[2]
    args[#args + 1] = ARGV[i]
  end
  return redis.call(unpack(args))
end
return redis.call('ZREM', directory, unpack(ARGV, 3))
