import { afterEach, describe, expect, it } from "vitest";
import { DaemonProcess, writeConfigFile, type LogLine } from "../support/daemonProcess.js";
import { monitorCommands } from "../support/monitorFeed.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const running: DaemonProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill()));
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function startDaemons(count: number, prefix: string): Promise<DaemonProcess[]> {
  // testConfig's lease key is `${prefix}:lease`.
  const config = await writeConfigFile(testConfig(fixture.server.url, prefix, [{}]));
  cleanups.push(config.remove);
  const daemons = await Promise.all(
    Array.from({ length: count }, () => DaemonProcess.start(config.path)),
  );
  running.push(...daemons);
  return daemons;
}

async function leaders(daemons: readonly DaemonProcess[]): Promise<DaemonProcess[]> {
  const flags = await Promise.all(daemons.map((daemon) => daemon.isLeader()));
  return daemons.filter((_, i) => flags[i]);
}

async function soleLeader(
  daemons: readonly DaemonProcess[],
  timeoutMs = 10_000,
): Promise<DaemonProcess> {
  return waitFor(
    async () => {
      const current = await leaders(daemons);
      return current.length === 1 ? current[0] : undefined;
    },
    { timeoutMs, what: "exactly one leader" },
  );
}

const { lease: TIMING } = testConfig("redis://unused", "unused");
/**
 * ttlMs + 1.2 * retryPeriodMs, counted in the standby's acquire attempts after the kill: those
 * that fit while the dead leader's key lives (one per retry period at least), the one that wins,
 * and one already sent when the leader died. Counted, so that a busy machine delaying the
 * standby's timers (or this process's) cannot fail it.
 */
const TAKEOVER_ATTEMPTS = Math.floor(TIMING.ttlMs / TIMING.retryPeriodMs) + 2;

/**
 * The distinct lease values tried on `key` in `calls` (redlock's acquire and extend scripts: one
 * key, a value, a duration), up to and including `won`: each acquire attempt tries a new value,
 * the renewals of a term repeat its own.
 */
function valuesTriedUntil(calls: readonly string[][], key: string, won: string): string[] {
  const values: string[] = [];
  for (const [name = "", , keys, first, value = ""] of calls) {
    if (!/^eval(sha)?$/iu.test(name) || keys !== "1" || first !== key) continue;
    if (!values.includes(value)) values.push(value);
    if (value === won) return values;
  }
  throw new Error(`no attempt with the winning value among ${values.length}`);
}

/**
 * Resolves at the leader's next renewal: the lease key's expiry time (PEXPIRETIME, on Redis's
 * clock) moved on. Not its TTL going back up: a TTL read within a millisecond of a renewal is
 * the full TTL, which no later read exceeds, and on a busy machine polls far apart missed every
 * renewal that way. A wait on another process, so a generous bound: a leader that stopped
 * renewing shows as a lost or changed leader (checked after each renewal), or as a key whose
 * expiry never moves.
 */
async function nextRenewal(key: string): Promise<void> {
  const expiresAt = async () => Number(await fixture.redis.call("PEXPIRETIME", key));
  const before = await expiresAt();
  await waitFor(async () => (await expiresAt()) > before, {
    timeoutMs: 10 * TIMING.ttlMs,
    what: "a renewal of the lease",
  });
}

/** The "lease acquired" line `daemon` logged after its first `from` lines. */
function acquiredLine(daemon: DaemonProcess | undefined, from: number): LogLine {
  const line = daemon?.logs.slice(from).find((l) => l.msg === "lease acquired");
  if (line === undefined) throw new Error("the standby logged no acquisition");
  return line;
}

describe("leadership across processes", () => {
  it("keeps exactly one leader among three daemons over many renewals", async () => {
    const prefix = uniquePrefix("three");
    const daemons = await startDaemons(3, prefix);
    await soleLeader(daemons);
    // Sample at every renewal for two TTLs: never two leaders, never a change of leader while
    // all are healthy.
    const first = await soleLeader(daemons);
    const renewals = Math.ceil((2 * TIMING.ttlMs) / TIMING.retryPeriodMs);
    for (let sample = 0; sample < renewals; sample += 1) {
      await nextRenewal(`${prefix}:lease`);
      const current = await leaders(daemons);
      expect(current.length).toBeLessThanOrEqual(1);
      if (current.length === 1) expect(current[0]).toBe(first);
    }
  });

  it("hands over within ttl + 1.2 * retry period after kill -9 of the leader", async () => {
    const prefix = uniquePrefix("kill9");
    const key = `${prefix}:lease`;
    const daemons = await startDaemons(2, prefix);
    const leader = await soleLeader(daemons);
    const standby = daemons.find((daemon) => daemon !== leader);
    const logged = standby?.logs.length ?? 0;
    const dead = await fixture.redis.get(key);
    const feed = await monitorCommands(fixture.server.port);
    cleanups.push(() => Promise.resolve(feed.stop()));
    // From the kill on: an attempt already sent then may show after this index (bounded above).
    const fromKill = feed.calls.length;
    const killedAt = Date.now();
    leader.signal("SIGKILL");
    await waitFor(() => standby?.isLeader(), { timeoutMs: 10_000, what: "the standby to lead" });
    const won = await fixture.redis.get(key);
    const tried = valuesTriedUntil(feed.calls.slice(fromKill), key, won ?? "");
    const attempts = tried.filter((value) => value !== dead);
    // The standby's own log line, for the figure: how slowly this process notices is not it.
    const takeoverMs = Number(acquiredLine(standby, logged).time) - killedAt;
    console.log(
      `take-over after kill -9: ${takeoverMs.toFixed(0)} ms, attempt ${attempts.length} (bound ${TAKEOVER_ATTEMPTS})`,
    );
    expect(attempts.length).toBeLessThanOrEqual(TAKEOVER_ATTEMPTS);
  });

  it("releases the lease on SIGTERM, exits 0, and the standby takes over at once", async () => {
    const prefix = uniquePrefix("sigterm");
    const daemons = await startDaemons(2, prefix);
    const leader = await soleLeader(daemons);
    const standby = daemons.find((daemon) => daemon !== leader);
    const logged = standby?.logs.length ?? 0;
    leader.signal("SIGTERM");
    expect((await leader.exited).code).toBe(0);
    await waitFor(() => standby?.isLeader(), { timeoutMs: 10_000, what: "the standby to lead" });
    // From the leader giving the lease up to the standby taking it, by the daemons' own log
    // times: how long the leader's shutdown or this process's polling take is not the point.
    const givenUp = leader.logs.find((line) => line.msg === "lease given up");
    expect(givenUp).toBeDefined();
    const takeoverMs = Number(acquiredLine(standby, logged).time) - Number(givenUp?.time);
    console.log(`take-over after SIGTERM: ${takeoverMs.toFixed(0)} ms`);
    // Released, not expired: well under the TTL.
    expect(takeoverMs).toBeLessThan(TIMING.ttlMs);
    expect(leader.logs.some((line) => line.msg === "stopped")).toBe(true);
    expect(await fixture.redis.get(`${prefix}:lease`)).not.toBeNull();
  });
});
