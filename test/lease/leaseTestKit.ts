import { once } from "node:events";
import { Redis, type RedisOptions } from "ioredis";
import { pino } from "pino";
import { expect, vi } from "vitest";
import { waitFor } from "../support/waitFor.js";
import { Lease } from "../../src/lease/Lease.js";
import type { Timers } from "../../src/core/timers.js";
import type { LeaseEvents, LeaseOptions } from "../../src/lease/types.js";

export const silentLogger = pino({ level: "silent" });

/**
 * Small timings that satisfy ttl > deadline > 1.2 * period, with room for a busy two-core
 * machine: the deadline leaves 2.5 command timeouts, and the command timeout is 4 periods (a
 * 100 ms timeout once failed 2 of 28 tests while the cores were busy).
 */
export const FAST = { ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 100 } as const;
export const COMMAND_TIMEOUT_MS = 400;

/** Resolves after `lease` emitted `event` `count` times from now (time measured in lease steps). */
export async function events(lease: Lease, event: keyof LeaseEvents, count: number): Promise<void> {
  for (let seen = 0; seen < count; seen += 1) await once(lease, event);
}

/**
 * Resolves once `commands` grew by `count` lease scripts (acquire attempts of a standby): how
 * tests let "several retry periods" pass without sleeping.
 */
export async function attempts(commands: CommandCount, count: number): Promise<void> {
  const start = commands.acquires();
  await waitFor(() => commands.acquires() >= start + count, {
    what: `${count} acquire attempts`,
  });
}

/**
 * The lease's own connection, as the composition root would build it: short commandTimeout, no
 * resend of unanswered commands, fail fast while disconnected. Connected before use, because
 * commandTimeout also counts the time a command waits for the connection.
 */
export async function leaseConnection(
  server: { port: number },
  options: RedisOptions = {},
): Promise<Redis> {
  const redis = new Redis({
    port: server.port,
    host: "127.0.0.1",
    lazyConnect: true,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: () => 20,
    ...options,
  });
  // Connection errors surface through the commands; without a listener ioredis prints them.
  redis.on("error", () => undefined);
  await redis.connect();
  return redis;
}

/** Real timers that remember which are still pending, to prove stop() leaves none behind. */
export class RecordingTimers implements Timers {
  readonly pending = new Set<NodeJS.Timeout>();

  setTimeout(callback: () => void, ms: number): unknown {
    const handle = setTimeout(() => {
      this.pending.delete(handle);
      callback();
    }, ms);
    this.pending.add(handle);
    return handle;
  }

  clearTimeout(handle: unknown): void {
    if (handle === undefined) return;
    clearTimeout(handle as NodeJS.Timeout);
    this.pending.delete(handle as NodeJS.Timeout);
  }
}

export interface CommandCount {
  readonly count: number;
  names(): string[];
  /**
   * Acquire attempts: redlock's acquire script (EVALSHA/EVAL with one key, a value and a
   * duration). Extensions look the same, so count these on standbys only.
   */
  acquires(): number;
}

/** Counts the commands a client sends (every ioredis command goes through sendCommand). */
export function countCommands(redis: Redis): CommandCount {
  const spy = vi.spyOn(redis, "sendCommand");
  return {
    get count() {
      return spy.mock.calls.length;
    },
    names: () => spy.mock.calls.map(([command]) => command.name),
    acquires: () =>
      spy.mock.calls.filter(
        ([command]) =>
          (command.name === "evalsha" || command.name === "eval") && command.args.length === 5,
      ).length,
  };
}

/** events.once, typed with the Lease's event map. */
export function nextEvent<E extends keyof LeaseEvents>(
  lease: Lease,
  event: E,
): Promise<LeaseEvents[E]> {
  return once(lease, event) as Promise<LeaseEvents[E]>;
}

export interface LeaseFixtureOptions {
  /** The lease connection's commandTimeout when a call gives none (COMMAND_TIMEOUT_MS otherwise). */
  commandTimeout?: number;
  /**
   * Tests that break Redis: disconnect first, which fails whatever is outstanding so stop() does
   * not wait for it, then stop and check that no timer is left behind.
   */
  disconnectFirst?: boolean;
}

/**
 * The one `newLease(key, overrides?, commandTimeout?)` of the lease tests: a Lease with FAST
 * timings and RecordingTimers on a connection of its own, stopped and disconnected by the
 * test file's `cleanup` steps (run in reverse after each test).
 */
export function leaseFactory(
  fixture: { readonly server: { port: number } },
  cleanup: (() => Promise<void> | void)[],
  fixtureOptions: LeaseFixtureOptions = {},
) {
  return async function newLease(
    key: string,
    overrides: Partial<LeaseOptions> = {},
    commandTimeout = fixtureOptions.commandTimeout,
  ) {
    const redis = await leaseConnection(
      fixture.server,
      commandTimeout === undefined ? {} : { commandTimeout },
    );
    const timers = new RecordingTimers();
    const commands = countCommands(redis);
    const lease = new Lease({ redis, key, ...FAST, logger: silentLogger, timers, ...overrides });
    cleanup.push(async () => {
      if (fixtureOptions.disconnectFirst === true) {
        redis.disconnect();
        await lease.stop();
        expect(timers.pending.size).toBe(0);
        return;
      }
      await lease.stop();
      redis.disconnect();
    });
    return { lease, redis, timers, commands };
  };
}
