import { once } from "node:events";
import { Redis, type RedisOptions } from "ioredis";
import { pino } from "pino";
import { vi } from "vitest";
import type { Lease } from "../../src/lease/Lease.js";
import type { Timers } from "../../src/lease/timers.js";
import type { LeaseEvents } from "../../src/lease/types.js";

export const silentLogger = pino({ level: "silent" });

/** Tiny timings that satisfy ttl > deadline > 1.2 * period. */
export const FAST = { ttlMs: 300, renewDeadlineMs: 200, retryPeriodMs: 50 } as const;

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
    commandTimeout: 100,
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

/** Counts the commands a client sends (every ioredis command goes through sendCommand). */
export function countCommands(redis: Redis): { readonly count: number; names(): string[] } {
  const spy = vi.spyOn(redis, "sendCommand");
  return {
    get count() {
      return spy.mock.calls.length;
    },
    names: () => spy.mock.calls.map(([command]) => command.name),
  };
}

/** events.once, typed with the Lease's event map. */
export function nextEvent<E extends keyof LeaseEvents>(
  lease: Lease,
  event: E,
): Promise<LeaseEvents[E]> {
  return once(lease, event) as Promise<LeaseEvents[E]>;
}
