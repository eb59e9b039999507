import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./waitFor.js";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to completion. */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

export async function writeConfigFile(
  config: unknown,
): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "sj-config-"));
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify(config));
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A `stream-janitor run` child process, with its JSON log lines parsed as they arrive. */
export class DaemonProcess {
  readonly logs: LogLine[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  httpUrl = "";
  private constructor(readonly child: ChildProcess) {
    let buffered = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          this.logs.push({ msg: line });
        }
      }
    });
    child.stderr?.on("data", (chunk: Buffer) =>
      this.logs.push({ msg: chunk.toString(), stderr: true }),
    );
    this.exited = once(child, "exit").then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
  }

  /** `launcher` runs the daemon through another command (`["prlimit", "--nofile=256:256", "--"]`). */
  static async start(
    configPath: string,
    env: NodeJS.ProcessEnv = {},
    launcher: readonly string[] = [],
  ): Promise<DaemonProcess> {
    const [command, ...args] = [...launcher, process.execPath, CLI, "run", "--config", configPath];
    const child = spawn(command ?? process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const daemon = new DaemonProcess(child);
    const listening = await daemon.waitForLog(
      (line) => line.msg === "http server listening",
      20_000,
    );
    daemon.httpUrl = String(listening.url);
    return daemon;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  async waitForLog(predicate: (line: LogLine) => boolean, timeoutMs = 15_000): Promise<LogLine> {
    let found: LogLine | undefined;
    await waitFor(
      () => {
        found = this.logs.find(predicate);
        return found !== undefined || this.child.exitCode !== null;
      },
      { timeoutMs, what: "a log line" },
    );
    if (found === undefined)
      throw new Error(`daemon exited before logging it: ${JSON.stringify(this.logs.slice(-5))}`);
    return found;
  }

  async metric(name: string): Promise<number | undefined> {
    const response = await fetch(`${this.httpUrl}/metrics`);
    const text = await response.text();
    const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
  }

  /** Leader per its own /metrics; false when it does not answer (stopped, frozen, dead). */
  async isLeader(): Promise<boolean> {
    try {
      return (await this.metric("stream_janitor_leader")) === 1;
    } catch {
      return false;
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** SIGKILL if still running; for afterEach. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGCONT");
      this.child.kill("SIGKILL");
      await this.exited;
    }
  }
}
