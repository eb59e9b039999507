import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { freePort, spawnRedisServer } from "../../src/demo/spawnRedisServer.js";
import { spawnOnFreePort } from "./spawnOnFreePort.js";

/** A throwaway redis-server on an ephemeral port, in a temporary directory, without persistence. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly process: ChildProcess;
  /** A new client; closed by stop(). */
  client(): Redis;
  /** SIGKILL the server (data is gone: no persistence). */
  kill(): Promise<void>;
  /** Start a fresh server on the same port after kill(). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export { freePort };

export async function startRedis(extraArgs: readonly string[] = []): Promise<RedisServer> {
  const root = await mkdtemp(join(tmpdir(), "sj-redis-"));
  // Another port if this one is taken by the time the server binds it (files run side by side).
  const first = await spawnOnFreePort({ root, extraArgs });
  const port = first.port;
  const dir = join(root, String(port));
  let child = first.child;
  // A worker that dies mid-test must not leave servers behind.
  const killOnExit = (): void => {
    child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);
  const clients: Redis[] = [];
  const killChild = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get process() {
      return child;
    },
    client() {
      const redis = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1, protocol: 2 });
      // Tests kill and restart servers; a client's reconnect errors are expected then.
      redis.on("error", () => undefined);
      clients.push(redis);
      return redis;
    },
    kill: killChild,
    async restart() {
      await killChild();
      child = await spawnRedisServer({ port, dir, extraArgs });
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await killChild();
      process.off("exit", killOnExit);
      await rm(root, { recursive: true, force: true });
    },
  };
}

let prefixCounter = 0;
/** A key prefix unique to one test, so tests never see each other's keys. */
export function uniquePrefix(name: string): string {
  prefixCounter += 1;
  return `t${process.pid}-${prefixCounter}-${name.replace(/[^a-z0-9]+/giu, "-")}`;
}

export interface RedisFixture {
  /** The file's server; set before its tests run. */
  readonly server: RedisServer;
  /** A client of it. */
  readonly redis: Redis;
}

/** One throwaway server per test file: started before its tests, stopped after them. */
export function useRedisServer(): RedisFixture {
  let started: { server: RedisServer; redis: Redis } | undefined;
  beforeAll(async () => {
    const server = await startRedis();
    started = { server, redis: server.client() };
  });
  afterAll(async () => {
    await started?.server.stop();
  });
  const current = (): { server: RedisServer; redis: Redis } => {
    if (started === undefined) throw new Error("useRedisServer: used outside a test");
    return started;
  };
  return {
    get server() {
      return current().server;
    },
    get redis() {
      return current().redis;
    },
  };
}
