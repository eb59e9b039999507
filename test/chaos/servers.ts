import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { withTimeout } from "../../src/core/withTimeout.js";
import { CHAOS_GROUPS, MIN_IDLE_MS } from "./groups.js";
import type { Launch } from "./portMap.js";

/** Commands slower than this are logged (SLOWLOG threshold, microseconds) and reported. */
const SLOWLOG_US = 10_000;
/**
 * The bound on one janitor command's Redis time (microseconds). The scripts' own budget is
 * sweep.maxScriptMs (2 ms); the bound leaves room for a loaded host preempting Redis mid-call.
 */
export const SLOW_COMMAND_US = 100_000;

export const LEASE_KEY = "chaos:lease";

/**
 * How long a (re)start may take. A long run writes bodies of up to 1 MiB to the AOF, and a loaded
 * host took over 10 s (spawnRedisServer's bound) to replay it: that start was abandoned, and
 * Redis stayed down until the next restart fault.
 */
const START_TIMEOUT_MS = 120_000;

/** Resolves on the server's own "ready" log line; SIGKILLs it if that never comes. */
async function whenReady(child: ChildProcess): Promise<void> {
  let output = "";
  const onData = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-2000);
  };
  child.stdout?.on("data", onData);
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", () => {
      if (output.includes("Ready to accept connections")) resolve();
    });
    child.once("exit", (code: number | null) =>
      reject(new Error(`redis-server exited (${String(code)}): ${output}`)),
    );
  });
  try {
    await withTimeout(ready, START_TIMEOUT_MS, () => {
      throw new Error(`redis-server not ready within ${START_TIMEOUT_MS} ms`);
    });
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    // Past start-up its output is of no interest; drained so the pipe never fills.
    child.stdout?.removeAllListeners("data");
    child.stdout?.resume();
  }
}

/** Standalone: every write fsynced to the AOF, so a SIGKILL loses nothing acknowledged. */
const PERSISTED = ["--appendonly", "yes", "--appendfsync", "always"];

/** The Redis under test (standalone: persisted by PERSISTED; a Cluster node: `args`). */
export class ChaosRedis {
  process: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly dir: string,
    readonly args: readonly string[] = PERSISTED,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (replaying its AOF after a kill); says how long that took. */
  async start(): Promise<string> {
    const started = Date.now();
    const child = spawn(
      "redis-server",
      [
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--dir",
        this.dir,
        "--save",
        "",
        ...this.args,
        "--slowlog-log-slower-than",
        String(SLOWLOG_US),
        "--slowlog-max-len",
        "1024",
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    this.process = child;
    await whenReady(child);
    return `ready after ${Date.now() - started} ms`;
  }

  async kill(): Promise<void> {
    const child = this.process;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }
}

/** One janitor replica: `node <cli> run --config FILE`, its output appended to a log file. */
export class JanitorReplica {
  process: ChildProcess | undefined;
  stopped = false;
  constructor(
    readonly index: number,
    readonly cli: string,
    readonly configPath: string,
    readonly httpPort: number,
    readonly logPath: string,
    readonly launch: Launch = { nodeArgs: [], env: {} },
  ) {}

  /** Starts the process unless it runs already (a restart planned by the nemesis may come late). */
  start(): void {
    if (this.running) return;
    const log = createWriteStream(this.logPath, { flags: "a" });
    const args = [...this.launch.nodeArgs, this.cli, "run", "--config", this.configPath];
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...this.launch.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    this.process = child;
    this.stopped = false;
  }

  get running(): boolean {
    const child = this.process;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.process?.kill(signal);
    if (signal === "SIGSTOP") this.stopped = true;
    if (signal === "SIGCONT") this.stopped = false;
  }

  async kill(): Promise<void> {
    const child = this.process;
    if (child === undefined || !this.running) return;
    const exited = once(child, "exit");
    child.kill("SIGCONT");
    child.kill("SIGKILL");
    await exited;
  }

  /** GET `path` from its HTTP port; undefined while it is down, stopped or silent. */
  async get(path: string): Promise<string | undefined> {
    if (!this.running || this.stopped) return undefined;
    try {
      const response = await fetch(`http://127.0.0.1:${this.httpPort}${path}`, {
        signal: AbortSignal.timeout(3000),
      });
      return await response.text();
    } catch {
      return undefined;
    }
  }

  /** A metric's value from its /metrics (first sample with all `labels`); undefined if silent. */
  async metric(name: string, labels: readonly string[] = []): Promise<number | undefined> {
    const text = await this.get("/metrics");
    return text === undefined ? undefined : metricValue(text, name, labels);
  }
}

/** A metric's value in a /metrics text (first sample with all `labels`); undefined if none. */
export function metricValue(
  text: string,
  name: string,
  labels: readonly string[] = [],
): number | undefined {
  const line = text
    .split("\n")
    .find(
      (l) =>
        (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) &&
        labels.every((label) => l.includes(label)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/**
 * The janitors' configuration: short lease and sweep interval, every chaos group. `changed` is
 * the variant a SIGHUP fault loads: a slower sweep and minIdleMs 1.2 s (slow consumers still
 * take longer, heartbeats still beat well within it).
 */
export async function writeJanitorConfig(
  dir: string,
  redis: Record<string, unknown>,
  httpPort: number,
  changed = false,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `janitor-${httpPort}.json`);
  const config = {
    redis,
    http: { host: "127.0.0.1", port: httpPort },
    log: { level: "warn" },
    lease: { key: LEASE_KEY, ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
    sweep: { intervalMs: changed ? 350 : 200 },
    metrics: { pelScanIntervalMs: 500 },
    // Verdicts within seconds of the quiet period (the default samples every 10 s).
    status: { intervalMs: 500, window: 4 },
    groups: CHAOS_GROUPS.map((group) => ({
      stream: group.stream,
      group: group.group,
      action: group.action,
      minIdleMs: changed ? MIN_IDLE_MS * 1.2 : MIN_IDLE_MS,
      maxDeliveries: group.maxDeliveries,
      deadLetterStream: group.deadLetters,
      ...(group.lane === undefined ? {} : { retryLane: true }),
    })),
  };
  // Written whole, then renamed: a SIGHUP never reads half a file.
  await writeFile(`${path}.tmp`, JSON.stringify(config, null, 2));
  await rename(`${path}.tmp`, path);
  return path;
}
