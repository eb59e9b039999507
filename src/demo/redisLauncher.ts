import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { constants } from "node:fs";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { maskRedisUrl } from "../config/formatEffectiveConfig.js";
import { freePort, spawnRedisServer } from "./spawnRedisServer.js";

/** The Redis the demo talks to: a throwaway server it started, or one the user pointed it at. */
export interface DemoRedis {
  readonly url: string;
  /** True when the demo started the server, so it may wipe and must kill it. */
  readonly owned: boolean;
  /** The pid of the server the demo started. */
  readonly pid: number | undefined;
  /** One line saying what this Redis is, for the transcript. */
  readonly description: string;
  /** Kills the server and removes its directory (owned), or does nothing. Idempotent. */
  stop(): Promise<void>;
}

/** Neither redis-server on PATH nor STREAM_JANITOR_REDIS_URL: the demo cannot run. */
export class NoRedisForDemoError extends Error {
  override name = "NoRedisForDemoError";
}

const STOP_GRACE_MS = 3_000;

export async function provideRedis(env: NodeJS.ProcessEnv): Promise<DemoRedis> {
  const url = env.STREAM_JANITOR_REDIS_URL;
  if (url !== undefined && url !== "") {
    return {
      url,
      owned: false,
      pid: undefined,
      description: `using your Redis at ${maskRedisUrl(url)} (set by STREAM_JANITOR_REDIS_URL)`,
      stop: () => Promise.resolve(),
    };
  }
  const binary = await findOnPath("redis-server", env.PATH ?? "");
  if (binary === undefined) {
    throw new NoRedisForDemoError(
      [
        "the demo needs a Redis >= 7.0 to play with, and found none:",
        "  - install one so that redis-server is on PATH",
        "      Debian/Ubuntu: sudo apt-get install redis-server   macOS: brew install redis",
        "    (the demo starts its own throwaway server on a free port and removes it afterwards), or",
        "  - point it at a server you have: STREAM_JANITOR_REDIS_URL=redis://host:6379 npm run demo",
        "    (it only touches keys starting with demo: or {demo:, and never flushes anything)",
      ].join("\n"),
    );
  }
  return startThrowawayServer(binary);
}

async function findOnPath(name: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory; try the next one.
    }
  }
  return undefined;
}

async function startThrowawayServer(binary: string): Promise<DemoRedis> {
  const dir = await mkdtemp(join(tmpdir(), "stream-janitor-demo-"));
  const port = await freePort();
  // Its own process group: a Ctrl-C in the terminal must reach only the demo, which then stops
  // the daemon while Redis still answers, and kills the server last.
  const child = await spawnRedisServer({ binary, port, dir, detached: true }).catch(
    async (error: unknown) => {
      await rm(dir, { recursive: true, force: true });
      throw error;
    },
  );
  // Safety net for an exit that skips stop() (a crash): never leave a server behind.
  const killOnExit = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.on("exit", killOnExit);
  const removeDir = (): Promise<void> => rm(dir, { recursive: true, force: true });
  let stopping: Promise<void> | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    owned: true,
    pid: child.pid,
    description: `started a throwaway redis-server (pid ${String(child.pid)}) on port ${port}, data in ${dir}, no persistence`,
    stop: () => {
      stopping ??= (async () => {
        await terminate(child);
        process.off("exit", killOnExit);
        await removeDir();
      })();
      return stopping;
    },
  };
}

/** SIGTERM (nothing to save, so it is quick), SIGKILL if it lingers. */
async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}
