#!lua
--[[
startRedriveTask: records a redrive task (`dlq redrive --async`) as RUNNING, unless its
dead-letter stream already has an active one.

One active task per dead-letter stream: the active key holds its id from the start until the
task ends (redriveTaskBatch.lua deletes it in the same call that records the end), so its
presence is the rule. Run again with the same id (a start whose reply was lost), it changes
nothing and answers as the first call did.

KEYS[1]  the task hash (src/core/redriveTask.ts)
KEYS[2]  the dead-letter stream's active-task key

ARGV[1]  the task id
ARGV[2...]  the task's fields, name and value pairs (status, moved, cursor ... as the hash holds)

Returns { started, activeId }: started 1 when this task is (now) the active one, 0 when another
task is active; activeId the active task's id.
Errors: none (nothing to check before the writes).
]]

local task, active = KEYS[1], KEYS[2]
local id = ARGV[1]

local current = redis.call('GET', active)
if current then
  return { current == id and 1 or 0, current }
end
redis.call('HSET', task, unpack(ARGV, 2))
redis.call('SET', active, id)
return { 1, id }
