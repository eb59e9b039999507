#!lua flags=no-writes
--[[
entriesExist: which of a page of pending ids still have an entry in the stream (a pending id
whose entry was deleted or trimmed away is a ghost), for the web console's group page. Read-only;
the entries are looked up inside Redis and only 1/0 crosses the network, never a body. The caller
bounds the page (src/scripts/entriesExist.ts: at most MAX_IDS ids), so the call stays short.

KEYS[1]   the stream
ARGV[i]   the ids to look up

Returns an array of the same length as ARGV: 1 when XRANGE id id finds the entry, else 0 (also
when the stream is missing).
]]

local out = {}
for i = 1, #ARGV do
  local found = redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i], 'COUNT', 1)
  out[i] = (#found > 0) and 1 or 0
end
return out
