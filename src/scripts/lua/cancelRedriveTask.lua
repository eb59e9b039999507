#!lua
--[[
cancelRedriveTask: asks a RUNNING redrive task to stop (`dlq cancel TASK`): RUNNING becomes
CANCELLING, and the runner's next batch (redriveTaskBatch.lua) records CANCELLED instead of
moving anything. Any other status is left as it is; run twice, the second call changes nothing.

KEYS[1]  the task hash (src/core/redriveTask.ts)

Returns { before, after }: the status before and after the call ('' when there is no such task).
Errors: none (nothing to check before the write).
]]

local task = KEYS[1]
local status = redis.call('HGET', task, 'status')
if not status then return { '', '' } end
if status ~= 'RUNNING' then return { status, status } end
redis.call('HSET', task, 'status', 'CANCELLING')
return { status, 'CANCELLING' }
