import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { backoffPolicy, dueAfterMs } from "../../src/core/backoffThreshold.js";
import { loadScript } from "../../src/scripts/scriptedRedis.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

/** Sets each entry's owner, idle time and delivery count without a delivery (XCLAIM JUSTID). */
async function fabricate(
  stream: string,
  group: string,
  entries: readonly { id: string; consumer: string; idleMs: number; deliveries: number }[],
): Promise<void> {
  const pipeline = fixture.redis.pipeline();
  for (const { id, consumer, idleMs, deliveries } of entries) {
    pipeline.call(
      "XCLAIM",
      stream,
      group,
      consumer,
      0,
      id,
      "IDLE",
      idleMs,
      "RETRYCOUNT",
      deliveries,
      "JUSTID",
    );
  }
  await pipeline.exec();
}

describe("backoff tiers", () => {
  it("claims exactly the due entries and leaves the waiting ones untouched", async () => {
    const stream = uniquePrefix("backoff-due");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(6));
    // backoffMs [2s, 10s]: delivered once, due after 2 s; twice or more, after 10 s.
    const plan = [
      { idleMs: 3_000, deliveries: 1, due: true },
      { idleMs: 1_500, deliveries: 1, due: false }, // past minIdleMs, not past its tier
      { idleMs: 3_000, deliveries: 2, due: false }, // later deliveries wait longer
      { idleMs: 12_000, deliveries: 2, due: true },
      { idleMs: 12_000, deliveries: 7, due: true }, // the last tier repeats
      { idleMs: 5_000, deliveries: 3, due: false },
    ];
    await fabricate(
      stream,
      "workers",
      plan.map((p, i) => ({ id: ids[i] ?? "", consumer: `c${i % 2}`, ...p })),
    );
    const before = await pendingEntries(fixture.redis, stream, "workers");
    const group = groupConfig(stream, {
      minIdleMs: 1000,
      maxDeliveries: 100,
      backoffMs: [2000, 10_000],
      requeueStream: `${stream}:copies`,
    });

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result.error).toBeUndefined();
    expect(result.claimed).toBe(3);
    const copies = await fixture.redis.xrange(`${stream}:copies`, "-", "+");
    const copied = copies.map(([, fields]) => fields[fields.indexOf("x-original-id") + 1]);
    expect(copied).toEqual(ids.filter((_, i) => plan[i]?.due));
    const after = await pendingEntries(fixture.redis, stream, "workers");
    const waiting = before.filter((_, i) => plan[i]?.due === false);
    expect(after.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(
      waiting.map((e) => [e.id, e.consumer, e.deliveries]),
    );
    // Not touched: idle went on growing (a claim would have reset it).
    after.forEach((e, i) => expect(e.idleMs).toBeGreaterThanOrEqual(waiting[i]?.idleMs ?? 0));
  });

  it("counts a requeued copy's earlier deliveries (x-delivery-count) toward its tier", async () => {
    const stream = uniquePrefix("backoff-copies");
    // Two copies, each delivered once as a copy: one carries 2 earlier deliveries (3 in all),
    // the other none. backoffMs [1s, 10s, 1m]: 3 deliveries wait a minute, 1 delivery a second.
    const carried = await fixture.redis.xadd(stream, "*", "k", "v", "x-delivery-count", "2");
    const fresh = await fixture.redis.xadd(stream, "*", "k", "v", "x-delivery-count", "0");
    await fixture.redis.xgroup("CREATE", stream, "workers", "0");
    await fixture.redis.xreadgroup("GROUP", "workers", "c0", "STREAMS", stream, ">");
    await fabricate(stream, "workers", [
      { id: carried ?? "", consumer: "c0", idleMs: 15_000, deliveries: 1 },
      { id: fresh ?? "", consumer: "c0", idleMs: 15_000, deliveries: 1 },
    ]);
    const group = groupConfig(stream, {
      minIdleMs: 500,
      maxDeliveries: 100,
      backoffMs: [1000, 10_000, 60_000],
      requeueStream: `${stream}:copies`,
    });

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result.error).toBeUndefined();
    const copies = await fixture.redis.xrange(`${stream}:copies`, "-", "+");
    expect(copies.map(([, f]) => f[f.indexOf("x-original-id") + 1])).toEqual([fresh]);
    const after = await pendingEntries(fixture.redis, stream, "workers");
    expect(after.map((e) => [e.id, e.deliveries])).toEqual([[carried, 1]]);
  });

  it("dead-letters an entry idle past deadLetterAfterIdleMs even when its tier is not due yet", async () => {
    const stream = uniquePrefix("backoff-max-idle");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
    // backoffMs [2s, 1h] and deadLetterAfterIdleMs 30s: delivered twice, an entry waits for an
    // hour, unless it has idled 30 s: then it is due, and dead-lettered (max-idle).
    const plan = [
      { idleMs: 40_000, deliveries: 2 }, // past deadLetterAfterIdleMs: dead-lettered
      { idleMs: 20_000, deliveries: 2 }, // waits for its tier
      { idleMs: 3_000, deliveries: 1 }, // due by its tier: requeued
    ];
    await fabricate(
      stream,
      "workers",
      plan.map((p, i) => ({ id: ids[i] ?? "", consumer: "c0", ...p })),
    );
    const settings = {
      minIdleMs: 1000,
      maxDeliveries: 100,
      backoffMs: [2000, 3_600_000],
      deadLetterAfterIdleMs: 30_000,
    };
    const group = groupConfig(stream, { ...settings, requeueStream: `${stream}:copies` });
    // The due-entries gauge counts the same two entries as due.
    const policy = backoffPolicy(settings);
    const due = plan.filter((p, i) => p.idleMs >= dueAfterMs(policy, ids[i] ?? "", p.deliveries));
    expect(due).toHaveLength(2);

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result.error).toBeUndefined();
    expect(result.claimed).toBe(2);
    const dead = await fixture.redis.xrange(group.deadLetterStream, "-", "+");
    expect(
      dead.map(([, f]) => [
        f[f.indexOf("x-original-id") + 1],
        f[f.indexOf("x-dead-letter-reason") + 1],
      ]),
    ).toEqual([[ids[0], "max-idle"]]);
    const copies = await fixture.redis.xrange(`${stream}:copies`, "-", "+");
    expect(copies.map(([, f]) => f[f.indexOf("x-original-id") + 1])).toEqual([ids[2]]);
    const after = await pendingEntries(fixture.redis, stream, "workers");
    expect(after.map((e) => [e.id, e.deliveries])).toEqual([[ids[1], 2]]);
  });

  it("keeps each entry's jittered turn from sweep to sweep, as the TypeScript mirror computes it", async () => {
    const stream = uniquePrefix("backoff-jitter");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(200));
    const config = { minIdleMs: 1000, backoffMs: [10_000], backoffJitter: 0.5 };
    const policy = backoffPolicy(config);
    // Each entry 2 s short of its own threshold, or 2 s past it, alternately. Redis ages the
    // fabricated idle times in real time between the XCLAIM and the second sweep, and that time
    // cannot be injected: 2 s holds on a starved machine (300 ms did not at load 30), and the
    // thresholds still spread over 10 s, so a turn computed without the entry's own jitter is
    // caught. "computes the same thresholds in Lua as in TypeScript" checks them to the ms.
    const marginMs = 2000;
    const entries = ids.map((id, i) => {
      const threshold = dueAfterMs(policy, id, 1);
      const idleMs = threshold + (i % 2 === 0 ? -marginMs : marginMs);
      return { id, consumer: "c", deliveries: 1, idleMs };
    });
    const thresholds = new Set(entries.map((e) => e.idleMs));
    expect(thresholds.size).toBeGreaterThan(100); // the jitter does spread them
    await fabricate(stream, "workers", entries);
    const group = groupConfig(stream, {
      ...config,
      maxDeliveries: 100,
      requeueStream: `${stream}:copies`,
    });
    const context = sweepContext(fixture.redis);

    const first = await sweepOnce(group, context, neverAborted);
    const second = await sweepOnce(group, context, neverAborted);

    expect(first.claimed).toBe(100);
    expect(second.claimed).toBe(0);
    const pending = await pendingEntries(fixture.redis, stream, "workers");
    expect(pending.map((e) => e.id)).toEqual(ids.filter((_, i) => i % 2 === 0));
    expect(pending.every((e) => e.deliveries === 1)).toBe(true);
  });

  it("computes the same thresholds in Lua as in TypeScript, for any id", async () => {
    const ids = [
      "0-0",
      "1-0",
      "5-1",
      "999999-999999",
      "1000000-1000000",
      "18446744073709551615-18446744073709551615",
      "18446744073709551615-0",
      "9007199254740993-9007199254740993",
    ];
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let i = 0; i < 2000; i += 1) ids.push(`${1700000000000 + random()}-${random() % 50}`);
    const lua = `${loadScript("includes/backoff.lua")}
local tiers, count = parseTiers(ARGV[1], tonumber(ARGV[2]))
local out = {}
for i = 4, #ARGV do out[#out + 1] = dueAfter(tiers, count, tonumber(ARGV[2]), ARGV[i], tonumber(ARGV[3])) end
return out`;
    for (const [config, deliveries] of [
      [{ minIdleMs: 1000, backoffMs: [1000, 60_000, 2 ** 31 - 1], backoffJitter: 0.5 }, 3],
      [{ minIdleMs: 7, backoffMs: [], backoffJitter: 0.123 }, 1],
      [{ minIdleMs: 60_000, backoffMs: [5, 120_000], backoffJitter: 0.001 }, 2],
      [{ minIdleMs: 1, backoffMs: [3], backoffJitter: 0 }, 9],
    ] as const) {
      const policy = backoffPolicy(config);
      const reply = (await fixture.redis.eval(
        lua,
        0,
        policy.tiers.join(","),
        policy.jitterPermille,
        deliveries,
        ...ids,
      )) as number[];
      expect(reply).toEqual(ids.map((id) => dueAfterMs(policy, id, deliveries)));
    }
  });
});
