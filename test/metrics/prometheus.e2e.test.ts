// End to end: the daemon in-process, scraped by a real Prometheus that loads the project's alert
// rules; each alert expression is queried directly (no waiting for `for:`) and must select exactly
// the groups fabricated to trip it. Needs `prometheus` on PATH (or PROMETHEUS).
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { janitorConfig, redisNowMs } from "./refresherHarness.js";
import { startPrometheus, type RunningPrometheus } from "./startPrometheus.js";

const RULES_FILE = fileURLToPath(
  new URL("../../deploy/prometheus/stream-janitor.rules.yml", import.meta.url),
);
const POLL = { timeout: 15_000, interval: 100 };

interface AlertRule {
  alert: string;
  expr: string;
}

let server: RedisServer;
let redis: Redis;
let daemon: RunningDaemon | undefined;
let prometheus: RunningPrometheus | undefined;
const fatal: unknown[] = [];

const prefix = uniquePrefix("e2e");
const streams = {
  stuck: `${prefix}-stuck`,
  ghost: `${prefix}-ghost`,
  dead: `${prefix}-dead`,
  lagUnknown: `${prefix}-lag-unknown`,
  lagging: `${prefix}-lagging`,
};

/** A monitor group on a stream nobody created: a typo in the configuration. */
const typo = `${prefix}-typo`;

async function readRules(): Promise<AlertRule[]> {
  const document = parse(await readFile(RULES_FILE, "utf8")) as {
    groups: { rules: AlertRule[] }[];
  };
  return document.groups.flatMap((group) => group.rules).filter((rule) => rule.alert);
}

/** The state each fabricated group starts in; none of them is touched by a sweep until later. */
async function fabricateInitialState(): Promise<void> {
  const now = await redisNowMs(redis);
  // Entries idle for an hour in a group the janitor only monitors.
  await addStuckEntries(redis, streams.stuck, "workers", numberedBodies(3), { idleMs: 3_600_000 });
  for (const stream of [streams.ghost, streams.dead]) {
    await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  }
  // A deletion and a group created at an arbitrary id: Redis reports the lag as null.
  const t = now - 100_000;
  for (let seq = 1; seq <= 4; seq += 1)
    await redis.xadd(streams.lagUnknown, `${t}-${seq}`, "n", "x");
  await redis.xdel(streams.lagUnknown, `${t}-2`);
  await redis.xgroup("CREATE", streams.lagUnknown, "workers", `${t}-1`);
  // Entries wait after its position: with no consumer in sight that group would be STOP too.
  // A consumer just created counts as seen for the whole window: the lag alone is unknown.
  await redis.xgroup("CREATECONSUMER", streams.lagUnknown, "workers", "c");
  // An hour-old entry never delivered to the group, behind one it was given (and acknowledged).
  await redis.xadd(streams.lagging, `${now - 3_600_001}-0`, "n", "x");
  await redis.xadd(streams.lagging, `${now - 3_600_000}-0`, "n", "x");
  await redis.xgroup("CREATE", streams.lagging, "workers", "0");
  await redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    "c",
    "COUNT",
    1,
    "STREAMS",
    streams.lagging,
    ">",
  );
  await redis.xack(streams.lagging, "workers", `${now - 3_600_001}-0`);
}

/** Atomically (the leader sweeps every 100 ms): a pending entry whose body is gone, and a poison one. */
async function fabricateGhostAndDeadLetter(): Promise<void> {
  const now = await redisNowMs(redis);
  const ghostId = `${now}-1`;
  await redis
    .multi()
    .xadd(streams.ghost, ghostId, "n", "ghost")
    .call("XREADGROUP", "GROUP", "workers", "doomed", "COUNT", 1, "STREAMS", streams.ghost, ">")
    .xdel(streams.ghost, ghostId)
    .exec();
  const poisonId = `${now - 3_600_000}-1`;
  await redis
    .multi()
    .xadd(streams.dead, poisonId, "n", "poison")
    .call("XREADGROUP", "GROUP", "workers", "poisoned", "COUNT", 1, "STREAMS", streams.dead, ">")
    .call("XCLAIM", streams.dead, "workers", "poisoned", 0, poisonId, "RETRYCOUNT", 5, "JUSTID")
    .exec();
}

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  await fabricateInitialState();
  const monitor = { action: "monitor", minIdleMs: 1 } as const;
  const groups = [
    groupConfig(streams.stuck, monitor),
    groupConfig(streams.ghost, { minIdleMs: 1 }),
    groupConfig(streams.dead, { minIdleMs: 1, maxDeliveries: 3 }),
    groupConfig(streams.lagUnknown, monitor),
    groupConfig(streams.lagging, monitor),
    groupConfig(typo, monitor),
  ];
  const config = janitorConfig(server.url, groups, { pelScanIntervalMs: 100 });
  config.lease.key = `${prefix}:lease`;
  // A second status sample within a second; a window of 100 s, so the consumer that read the
  // lagging stream at the start stays "seen" (STALL, not STOP) for the whole test.
  config.status = { ...config.status, intervalMs: 1000, window: 100 };
  daemon = await startDaemon(config, {
    logger: pino({ level: "silent" }),
    version: "0.0.0-e2e",
    onFatal: (error) => fatal.push(error),
  });
  prometheus = await startPrometheus({
    target: new URL(daemon.httpUrl).host,
    rulesFile: RULES_FILE,
    interval: "200ms",
    ...(process.env.PROMETHEUS === undefined ? {} : { binary: process.env.PROMETHEUS }),
  });
});

afterAll(async () => {
  await prometheus?.stop();
  await daemon?.stop();
  await server.stop();
});

describe("Prometheus scraping the daemon, with the project's alert rules", () => {
  it("loads the rules, and each alert expression selects exactly the groups built to trip it", async () => {
    const rules = await readRules();
    const running = prometheus;
    if (running === undefined) throw new Error("prometheus did not start");
    const select = (expr: string): Promise<string[]> => running.select(expr);
    const all = Object.values(streams)
      .map((stream) => `${stream}/workers`)
      .sort();
    // Every group scraped, and the zero baselines of the counters in Prometheus before anything
    // happens: increase() needs a sample before the increment to see it.
    await vi.waitFor(async () => {
      expect(await select("stream_janitor_pending_entries")).toEqual(all);
      expect(
        await select(`stream_janitor_ghost_entries_total{stream="${streams.ghost}"}`),
      ).toHaveLength(1);
      expect(
        await select(`stream_janitor_dead_lettered_entries_total{stream="${streams.dead}"}`),
      ).toHaveLength(2);
      expect(await select("stream_janitor_leader == 1")).toHaveLength(1);
    }, POLL);
    await fabricateGhostAndDeadLetter();
    await vi.waitFor(async () => {
      expect(await select("stream_janitor_ghost_entries_total > 0")).toEqual([
        `${streams.ghost}/workers`,
      ]);
      expect(await select("stream_janitor_dead_lettered_entries_total > 0")).toEqual([
        `${streams.dead}/workers/max-deliveries`,
      ]);
      expect(await select("stream_janitor_dead_letter_length_entries > 0")).toEqual([
        `${streams.dead}/workers`,
      ]);
    }, POLL);

    // The status verdicts need two samples: wait for them (each alert selects its group).
    await vi.waitFor(async () => {
      expect(await select('stream_janitor_group_status{status="STALL"} == 1')).toEqual([
        `${streams.lagging}/workers`,
      ]);
      expect(await select('stream_janitor_group_status{status="STUCK"} == 1')).toEqual([
        `${streams.stuck}/workers`,
      ]);
    }, POLL);

    const expected: Record<string, string[]> = {
      StreamJanitorEntriesStuck: [`${streams.stuck}/workers`],
      // The same groups, judged by their status over the window.
      StreamJanitorStatusStuck: [`${streams.stuck}/workers`],
      StreamJanitorStatusStall: [`${streams.lagging}/workers`],
      StreamJanitorStatusError: [`${typo}/workers`],
      StreamJanitorGhostsDetected: [`${streams.ghost}/workers`],
      StreamJanitorDeadLettered: [`${streams.dead}/workers/max-deliveries`],
      StreamJanitorLagUnknown: [`${streams.lagUnknown}/workers`],
      StreamJanitorLagAgeHigh: [`${streams.lagging}/workers`],
      // The typo: unreadable, and its sweeps fail (kind missing-stream) instead of succeeding.
      StreamJanitorGroupUnreadable: [`${typo}/workers`],
      StreamJanitorSweepsFailing: [`${typo}/workers`],
    };
    for (const name of Object.keys(expected)) expect(rules.map((r) => r.alert)).toContain(name);
    // Every other alert must select nothing in this healthy-but-for-the-above setup.
    await vi.waitFor(async () => {
      const selected: Record<string, string[]> = {};
      for (const rule of rules) selected[rule.alert] = await select(rule.expr);
      expect(selected).toEqual(
        Object.fromEntries(rules.map((rule) => [rule.alert, expected[rule.alert] ?? []])),
      );
    }, POLL);

    // Prometheus loaded the file and evaluates every rule without error.
    await vi.waitFor(async () => {
      const data = await running.api<{ groups: { rules: { name: string; health: string }[] }[] }>(
        "/api/v1/rules?type=alert",
      );
      const health = data.groups.flatMap((group) => group.rules.map((r) => [r.name, r.health]));
      expect(health).toEqual(rules.map((rule) => [rule.alert, "ok"]));
    }, POLL);

    // The rules without `for:` fire through Prometheus' own evaluation too.
    await vi.waitFor(async () => {
      const data = await running.api<{
        alerts: { labels: Record<string, string>; state: string }[];
      }>("/api/v1/alerts");
      const firing = data.alerts
        .filter((alert) => alert.state === "firing")
        .map((alert) => `${alert.labels.alertname ?? ""} ${alert.labels.stream ?? ""}`)
        .sort();
      expect(firing).toEqual([
        `StreamJanitorDeadLettered ${streams.dead}`,
        `StreamJanitorGhostsDetected ${streams.ghost}`,
      ]);
    }, POLL);
    expect(fatal).toEqual([]);
  });
});
