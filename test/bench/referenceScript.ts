import type { Redis } from "ioredis";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import type { SweepPath } from "./naiveLoop.js";

/**
 * The minimal single-script sweep the issue compares the janitor with: one call claims a page
 * with XAUTOCLAIM and, for each entry, adds a copy and acknowledges the page with one XACK. No
 * checks, no fence, no PEL window (so no owners nor delivery counts: their metadata values are
 * constants), but the same copy as the janitor's: the fields, then the same metadata fields.
 */
const REFERENCE_LUA = `
local source, target = KEYS[1], KEYS[2]
local group, consumer, minIdle, cursor, count, path, maxLen =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local claim = redis.call('XAUTOCLAIM', source, group, consumer, minIdle, cursor, 'COUNT', count)
local acks = {}
local args = { 'XADD', target, '*' }
local metadata = { 'x-original-id', '', 'x-delivery-count', '1' }
if path == 'dead-letter' then
  args = { 'XADD', target, 'MAXLEN', '~', maxLen, '*' }
  metadata = { 'x-original-id', '', 'x-original-stream', source, 'x-original-group', group,
    'x-delivery-count', '1', 'x-dead-letter-reason', 'action', 'x-dead-lettered-at', '0',
    'x-last-consumer', consumer }
end
local prefix = #args
for _, entry in ipairs(claim[2]) do
  local fields = entry[2]
  local n = prefix
  for i = 1, #fields do args[n + i] = fields[i] end
  n = n + #fields
  metadata[2] = entry[1]
  for i = 1, #metadata do args[n + i] = metadata[i] end
  redis.call(unpack(args, 1, n + #metadata))
  acks[#acks + 1] = entry[1]
end
if #acks > 0 then redis.call('XACK', source, group, unpack(acks)) end
return { claim[1], #acks }
`;

export interface ReferenceOptions {
  stream: string;
  group: string;
  target: string;
  minIdleMs: number;
  path: SweepPath;
  pageSize: number;
  deadLetterMaxLen: number;
}

/** The reference's options for the stream and group the janitor sweeps as `group`. */
export function referenceOptions(
  group: ResolvedGroup,
  path: SweepPath,
  pageSize: number,
): ReferenceOptions {
  return {
    stream: group.stream,
    group: group.group,
    target: path === "requeue" ? group.requeueStream : group.deadLetterStream,
    minIdleMs: group.minIdleMs,
    path,
    pageSize,
    deadLetterMaxLen: group.deadLetterMaxLen,
  };
}

/** Sweeps the whole PEL with the reference script; returns entries moved and calls made. */
export async function referenceSweep(
  redis: Redis,
  options: ReferenceOptions,
): Promise<{ entries: number; calls: number }> {
  const sha = String(await redis.script("LOAD", REFERENCE_LUA));
  let cursor = "0-0";
  let entries = 0;
  let calls = 0;
  do {
    const [next, moved] = (await redis.evalsha(
      sha,
      2,
      options.stream,
      options.target,
      options.group,
      "reference-janitor",
      options.minIdleMs,
      cursor,
      options.pageSize,
      options.path,
      options.deadLetterMaxLen,
    )) as [string, number];
    cursor = next;
    entries += moved;
    calls += 1;
  } while (cursor !== "0-0");
  return { entries, calls };
}
