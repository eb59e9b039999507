import { afterAll, describe, expect, it } from "vitest";
import { companionKey } from "../../src/lease/LeaseLock.js";
import type { InspectReport } from "../../src/operations/inspectReport.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { addDeadLetters } from "./deadLetterFixtures.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

async function redisNowMs(): Promise<number> {
  const [seconds, micros] = (await fixture.redis.call("TIME")) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * A known state: 10 entries added 10 minutes ago, then 5 two minutes ago. Group `billing` read
 * the first 10 (4 pending with worker-a, 2 with worker-b), not the last 5; group `audit` read
 * everything and holds nothing. Two dead letters from 5 minutes ago. The lease is held.
 */
async function knownState(prefix: string) {
  const stream = `${prefix}:orders`;
  const now = await redisNowMs();
  const old = now - 600_000;
  const recent = now - 120_000;
  for (let i = 0; i < 10; i += 1) await fixture.redis.xadd(stream, `${old}-${i}`, "n", String(i));
  await fixture.redis.xgroup("CREATE", stream, "billing", "0");
  await fixture.redis.xgroup("CREATE", stream, "audit", "0");
  await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "billing",
    "worker-a",
    "COUNT",
    4,
    "STREAMS",
    stream,
    ">",
  );
  await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "billing",
    "worker-b",
    "COUNT",
    2,
    "STREAMS",
    stream,
    ">",
  );
  await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "billing",
    "worker-c",
    "COUNT",
    4,
    "STREAMS",
    stream,
    ">",
  );
  await fixture.redis.xack(stream, "billing", `${old}-6`, `${old}-7`, `${old}-8`, `${old}-9`);
  for (let i = 0; i < 5; i += 1) await fixture.redis.xadd(stream, `${recent}-${i}`, "n", String(i));
  const audit = (await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "audit",
    "reader",
    "STREAMS",
    stream,
    ">",
  )) as [string, [string][]][];
  await fixture.redis.xack(stream, "audit", ...(audit[0]?.[1].map(([id]) => id) ?? []));
  await addDeadLetters(fixture.redis, {
    stream,
    group: "billing",
    deadLetterStream: `{${stream}}:dead`,
    count: 2,
    atMs: now - 300_000,
  });
  const leaseKey = `${prefix}:lease`;
  await fixture.redis.set(leaseKey, "janitor-7f9c/4242/0123456789abcdef", "PX", 10_000);
  await fixture.redis.set(companionKey(leaseKey, "token"), "17");
  // The holder record the lease writes beside the key (src/lease/fenceLease.lua).
  await fixture.redis.hset(companionKey(leaseKey, "holder"), {
    value: "janitor-7f9c/4242/0123456789abcdef",
    host: "janitor-7f9c",
    pid: "4242",
    fencingToken: "17",
  });
  return { stream, leaseKey, old, recent };
}

describe("inspect", () => {
  it("--json reports every configured group and the lease, read-only", async () => {
    const prefix = uniquePrefix("inspect");
    const { stream, leaseKey, old } = await knownState(prefix);
    const config = await writeConfigFile({
      lease: { key: leaseKey },
      groups: [
        { stream, group: "billing" },
        { stream, group: "audit" },
        { stream: `${prefix}:missing`, group: "ghost-town" },
      ],
      retention: [{ stream, maxLen: 1000 }],
    });
    cleanups.push(config.remove);
    const before = await fixture.redis.dump(stream);
    const result = await runCli(["inspect", "--json", "--config", config.path], {
      STREAM_JANITOR_REDIS_URL: fixture.server.url,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(await fixture.redis.dump(stream)).toEqual(before);
    const report = JSON.parse(result.stdout) as InspectReport;
    const [billing, audit, missing] = report.groups;

    expect(billing).toMatchObject({
      stream,
      group: "billing",
      pending: 6,
      topConsumers: [
        { consumer: "worker-a", pending: 4 },
        { consumer: "worker-b", pending: 2 },
      ],
      consumersWithPending: 2,
      lag: 5,
      streamLength: 15,
      deadLetterStream: `{${stream}}:dead`,
      deadLetterLength: 2,
      retentionHeadroomMs: 0,
      retention: { stream, maxLen: 1000, maxAgeMs: 0 },
    });
    const about = (ms: number) => ({ asymmetricMatch: (v: number) => v >= ms && v < ms + 30_000 });
    expect(billing?.oldestPendingAgeMs).toEqual(about(600_000));
    expect(billing?.lagMs).toEqual(about(120_000));
    expect(billing?.oldestDeadLetterAgeMs).toEqual(about(300_000));

    // Caught up, nothing pending: the headroom is the age of the first entry.
    expect(audit).toMatchObject({
      pending: 0,
      oldestPendingAgeMs: null,
      topConsumers: [],
      lag: 0,
      lagMs: 0,
    });
    expect(audit?.retentionHeadroomMs).toEqual(about(600_000));
    expect(missing?.error).toMatch(/missing/u);

    expect(report.lease).toMatchObject({
      key: leaseKey,
      held: true,
      holderHost: "janitor-7f9c",
      holderPid: 4242,
      fencingToken: 17,
    });
    expect(report.lease.timeLeftMs).toBeGreaterThan(0);
    expect(report.lease.timeLeftMs).toBeLessThanOrEqual(10_000);
    expect(old).toBeLessThan(report.nowMs);
  });

  it("prints an aligned table for people", async () => {
    const prefix = uniquePrefix("inspect-table");
    const { stream, leaseKey } = await knownState(prefix);
    const config = await writeConfigFile({
      lease: { key: leaseKey },
      groups: [{ stream, group: "billing" }],
    });
    cleanups.push(config.remove);
    const result = await runCli(["inspect", "--config", config.path], {
      STREAM_JANITOR_REDIS_URL: fixture.server.url,
    });
    expect(result.code).toBe(0);
    const [header = "", row = ""] = result.stdout.split("\n");
    expect(header).toMatch(
      /^STREAM\s+GROUP\s+PENDING\s+OLDEST PENDING\s+TOP CONSUMERS\s+LAG\s+LAG AGE\s+DEAD LETTERS/u,
    );
    expect(row.indexOf("billing")).toBe(header.indexOf("GROUP"));
    expect(row).toContain("worker-a:4,worker-b:2");
    expect(result.stdout).toContain("held by janitor-7f9c pid 4242, fencing token 17");
  });

  it("shows the pending entries due for the next sweep, with backoff, in JSON and in the table", async () => {
    const stream = uniquePrefix("inspect-due");
    const add = (count: number, deliveries: number) =>
      addStuckEntries(fixture.redis, stream, "billing", numberedBodies(count), {
        idleMs: 10_000,
        deliveries,
      });
    await add(3, 1); // due: past the first tier (5 s)
    await add(2, 2); // waiting: the second delivery waits 1 min
    const config = await writeConfigFile({
      groups: [{ stream, group: "billing", minIdleMs: "1s", backoffMs: ["5s", "1m"] }],
    });
    cleanups.push(config.remove);
    const env = { STREAM_JANITOR_REDIS_URL: fixture.server.url };

    const json = await runCli(["inspect", "--json", "--config", config.path], env);
    const table = await runCli(["inspect", "--config", config.path], env);

    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as InspectReport;
    expect(report.groups[0]).toMatchObject({ pending: 5, pendingDue: 3 });
    const [header = "", row = ""] = table.stdout.split("\n");
    expect(header).toMatch(/HEADROOM\s+DUE$/u);
    expect(row).toMatch(/\s3$/u);
  });
});
