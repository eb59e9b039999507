import type { Redis } from "ioredis";

/**
 * Fast fabrication of large PELs, server-side: one script call adds `count` entries, delivers them
 * to a consumer with XREADGROUP (so last-delivered-id and entries-read move as they would) and
 * backdates them with XCLAIM ... IDLE JUSTID (delivery count stays 1). Chunks of 10,000 keep
 * each call around 50 ms; the Lua C stack (about 8,000 values) bounds one XCLAIM to 5,000 ids.
 */
const SEED_LUA = `
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
local count = tonumber(ARGV[3])
local idle = ARGV[4]
local payload = ARGV[5]
local offset = tonumber(ARGV[6])
local ids = {}
for i = 1, count do
  ids[i] = redis.call('XADD', stream, '*', 'type', 'order.created', 'seq', tostring(offset + i),
    'payload', payload)
end
redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '>')
for first = 1, count, 5000 do
  local args = { 'XCLAIM', stream, group, consumer, 0 }
  for i = first, math.min(first + 4999, count) do args[#args + 1] = ids[i] end
  args[#args + 1] = 'IDLE'
  args[#args + 1] = idle
  args[#args + 1] = 'JUSTID'
  redis.call(unpack(args))
end
return count
`;

/** A JSON body of about 100 bytes, like a small domain event. */
export const PAYLOAD = JSON.stringify({
  orderId: "4f9c2a7e-1b3d-4c8e-9a6f-2d5b7e8c1a3f",
  customer: 982_341,
  total: "129.90",
  currency: "EUR",
});

const CHUNK = 10_000;

export interface SeedResult {
  entries: number;
  seconds: number;
}

/**
 * Creates `stream` with group `group` and `count` entries pending for `crashed-consumer`, idle for
 * an hour. Nobody else may read the group meanwhile.
 */
export async function seedStuckPel(
  redis: Redis,
  stream: string,
  group: string,
  count: number,
): Promise<SeedResult> {
  const started = performance.now();
  await redis.call("XGROUP", "CREATE", stream, group, "$", "MKSTREAM");
  for (let offset = 0; offset < count; offset += CHUNK) {
    const n = Math.min(CHUNK, count - offset);
    await redis.call(
      "EVAL",
      SEED_LUA,
      1,
      stream,
      group,
      "crashed-consumer",
      n,
      3_600_000,
      PAYLOAD,
      offset,
    );
  }
  return { entries: count, seconds: (performance.now() - started) / 1000 };
}

/**
 * A fresh working copy of a seeded stream, consumer group and PEL included (COPY duplicates the
 * groups and their PELs, idle times too), so each measured run starts from the same state
 * without paying for seeding again. `alsoDelete` (the last run's copies, say) goes too.
 *
 * Nothing of the last run may spill into the next one: DEL frees at once, where UNLINK would leave
 * the old stream to a background thread that competes with the measured run for the two cores,
 * and the client's garbage (the naive loop's 200,000 fetched entries) is collected here rather
 * than during the next run (needs node --expose-gc, which `npm run bench` sets).
 */
export async function copyStream(
  redis: Redis,
  template: string,
  target: string,
  ...alsoDelete: string[]
): Promise<number> {
  const started = performance.now();
  await redis.call("DEL", target, ...alsoDelete);
  await redis.call("COPY", template, target);
  (globalThis as { gc?: () => void }).gc?.();
  return (performance.now() - started) / 1000;
}

/** PEL size from the XPENDING summary. */
export async function pendingCount(redis: Redis, stream: string, group: string): Promise<number> {
  const reply = (await redis.call("XPENDING", stream, group)) as unknown[];
  return Number(reply[0]);
}
