import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { Agent, get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { gunzipSync } from "node:zlib";
import { imageEnvironment, imageNodeOptions } from "../deploy/dockerfile.js";

/** A `stream-janitor run` child process, as an operator would run it. */
export interface DaemonChild {
  readonly pid: number;
  readonly httpUrl: string;
  readonly process: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** The last log lines (bounded), for error messages. */
  readonly recentLines: string[];
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then waits for the exit (SIGKILL after 30 s); removes the config file. */
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 30_000;
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** The repository root, from test/bench/results/build/test/bench/daemonProcess.js. */
const ROOT = new URL("../../../../../../", import.meta.url);

/**
 * Starts `node <cli> run --config <tmp>.yaml` with the image's NODE_OPTIONS (the file holds JSON, which is YAML too) and waits for
 * the "stream-janitor running" log line, which carries the HTTP address (http.port 0 in the config).
 */
export async function startDaemonChild(
  cliPath: string,
  config: Record<string, unknown>,
): Promise<DaemonChild> {
  const dir = await mkdtemp(join(tmpdir(), "sj-bench-"));
  const configPath = join(dir, "stream-janitor.yaml");
  // Compact: 1,000 listed groups must fit the 64 KiB cap on configuration files.
  await writeFile(configPath, JSON.stringify(config));
  // BENCH_NODE_ARGS: node flags NODE_OPTIONS refuses (`--cpu-prof --cpu-prof-dir=DIR`, a profile
  // of the daemon written when it exits).
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "");
  const dockerfile = await readFile(new URL("Dockerfile", ROOT), "utf8");
  // The image's allocator setting too: glibc's arenas per thread are part of the RSS measured.
  const arenas = imageEnvironment(dockerfile).get("MALLOC_ARENA_MAX");
  const child = spawn(process.execPath, [...nodeArgs, cliPath, "run", "--config", configPath], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      STREAM_JANITOR_CONFIG: "",
      ...(arenas === undefined ? {} : { MALLOC_ARENA_MAX: arenas }),
      // The image's NODE_OPTIONS (the V8 heap cap above all): a child measured without them
      // would show V8's lazy collection on a large host, not what the image runs.
      // BENCH_NODE_OPTIONS replaces them for a by-hand run (another heap cap, say).
      NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS ?? imageNodeOptions(dockerfile),
    },
  });
  running.add(child);
  let signalled = false;
  let started = false;
  const recentLines: string[] = [];
  const exited = once(child, "exit").then(([code, signal]) => {
    running.delete(child);
    // A daemon that dies on its own would otherwise surface as a refused connection later.
    if (!signalled && started) {
      process.stderr.write(
        `daemon ${String(child.pid)} exited by itself (code ${String(code)}, signal ${String(signal)}); last lines:\n${recentLines.join("\n")}\n`,
      );
    }
  });
  const remember = (line: string): void => {
    recentLines.push(line);
    if (recentLines.length > 40) recentLines.shift();
  };
  createInterface({ input: child.stderr }).on("line", remember);
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `daemon did not start within ${STARTUP_TIMEOUT_MS} ms:\n${recentLines.join("\n")}`,
        ),
      );
    }, STARTUP_TIMEOUT_MS);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`daemon exited during start-up:\n${recentLines.join("\n")}`));
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      remember(line);
      try {
        const parsed = JSON.parse(line) as { msg?: unknown; http?: unknown };
        if (parsed.msg === "stream-janitor running" && typeof parsed.http === "string") {
          clearTimeout(timer);
          resolve(parsed.http);
        }
      } catch {
        // not a log line
      }
    });
  });
  let httpUrl: string;
  try {
    httpUrl = await ready;
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  started = true;
  const pid = child.pid ?? 0;
  return {
    pid,
    httpUrl,
    process: child,
    exited,
    recentLines,
    kill: (signal) => {
      signalled = true;
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    async stop() {
      signalled = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const force = setTimeout(() => child.kill("SIGKILL"), 30_000);
        await exited;
        clearTimeout(force);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** A GET's answer as it came: `receivedAt` is performance.now() at its last byte. */
export interface RawAnswer {
  status: number;
  raw: Buffer;
  gzipped: boolean;
  receivedAt: number;
}

/** A GET's answer; `receivedAt`: performance.now() at its last byte, before it is inflated. */
interface Answer {
  status: number;
  body: string;
  receivedAt: number;
}

function getOnce(url: string, timeoutMs: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    // As Prometheus scrapes: it always offers gzip.
    const headers = { "accept-encoding": "gzip" };
    const request = get(url, { agent, timeout: timeoutMs, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const receivedAt = performance.now();
        const gzipped = response.headers["content-encoding"] === "gzip";
        resolve({
          status: response.statusCode ?? 0,
          raw: Buffer.concat(chunks),
          gzipped,
          receivedAt,
        });
      });
      response.on("error", reject);
    });
    request.on("timeout", () => request.destroy(new Error(`GET ${url} timed out`)));
    request.on("error", reject);
  });
}

/**
 * GET over a kept-alive connection (as Prometheus scrapes), not inflated yet: inflating 35 MB
 * takes the bench's event loop for hundreds of ms, which would delay another answer's timing.
 * A kept-alive socket the server closes just as it is reused fails with ECONNRESET ("socket hang
 * up"); the GET is idempotent, so that one case is retried once on a fresh socket.
 */
export async function httpGetRaw(url: string, timeoutMs = 10_000): Promise<RawAnswer> {
  try {
    return await getOnce(url, timeoutMs);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ECONNRESET") throw error;
    return getOnce(url, timeoutMs);
  }
}

/** The answer's text, inflated when it came gzipped. */
export function answerText(answer: RawAnswer): string {
  return (answer.gzipped ? gunzipSync(answer.raw) : answer.raw).toString();
}

/** GET over a kept-alive connection (as Prometheus scrapes): status and text. */
export async function httpGet(url: string, timeoutMs = 10_000): Promise<Answer> {
  const answer = await httpGetRaw(url, timeoutMs);
  return { status: answer.status, body: answerText(answer), receivedAt: answer.receivedAt };
}

/** The value of an unlabelled sample in a Prometheus exposition, or undefined. */
function gauge(body: string, name: string): number | undefined {
  const match = new RegExp(`^${name} (\\S+)$`, "mu").exec(body);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

export interface MemoryStatus {
  /** Resident set size now, kB. */
  rssKb: number;
  /** Peak resident set size (high-water mark), kB. */
  hwmKb: number;
}

/**
 * CPU time the process has used (user + system), ms, from /proc/<pid>/stat (Linux): what a
 * request cost the daemon itself, whatever else the machine runs (wall times are not).
 */
export async function cpuTimeMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at ") ": utime and stime are
  // fields 14 and 15, in clock ticks (100 per second on Linux).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** VmRSS and VmHWM from /proc/<pid>/status (Linux). */
export async function memoryStatus(pid: number): Promise<MemoryStatus | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const field = (name: string): number =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "mu").exec(text)?.[1] ?? Number.NaN);
  return { rssKb: field("VmRSS"), hwmKb: field("VmHWM") };
}

/** A daemon configuration for the bench: quiet HTTP on a free port, the given Redis. */
export function daemonConfig(
  redisUrl: string,
  overrides: { lease?: object; sweep?: object; metrics?: object; groups?: object[]; log?: object },
): Record<string, unknown> {
  return {
    redis: { url: redisUrl },
    http: { host: "127.0.0.1", port: 0 },
    log: { level: "info", ...overrides.log },
    lease: { ...overrides.lease },
    sweep: { ...overrides.sweep },
    ...(overrides.metrics === undefined ? {} : { metrics: overrides.metrics }),
    groups: overrides.groups ?? [],
  };
}

/** The child's leader gauge (undefined while /metrics does not answer or lacks it). */
export async function leaderGauge(child: DaemonChild): Promise<number | undefined> {
  try {
    return gauge((await httpGet(`${child.httpUrl}/metrics`, 1000)).body, "stream_janitor_leader");
  } catch {
    return undefined;
  }
}

/** True once the child says it holds the lease. */
export async function isLeader(child: DaemonChild): Promise<boolean> {
  return (await leaderGauge(child)) === 1;
}
