import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, vi } from "vitest";
import { freePort } from "../support/redisServer.js";

export interface RunningPrometheus {
  readonly url: string;
  /** Instant query; each sample as `stream/group` (plus `/reason` when the series has one). */
  select(expr: string): Promise<string[]>;
  /** GET on the HTTP API, parsed. */
  api<T>(path: string): Promise<T>;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  /** host:port of the daemon's HTTP server. */
  target: string;
  /** Loaded as `rule_files` (absolute path). */
  rulesFile: string;
  /** scrape and evaluation interval, e.g. "200ms". */
  interval: string;
  binary?: string;
}

/**
 * A throwaway Prometheus with its TSDB in a temporary directory, scraping one target as job
 * "stream-janitor" (the job name the rules expect). Resolves once /-/ready answers 200.
 */
export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), "sj-prometheus-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = [
    "global:",
    `  scrape_interval: ${options.interval}`,
    `  scrape_timeout: ${options.interval}`,
    `  evaluation_interval: ${options.interval}`,
    "rule_files:",
    `  - ${JSON.stringify(options.rulesFile)}`,
    "scrape_configs:",
    "  - job_name: stream-janitor",
    "    static_configs:",
    `      - targets: [${JSON.stringify(options.target)}]`,
  ].join("\n");
  await writeFile(join(dir, "prometheus.yml"), `${config}\n`);
  const child = spawn(
    options.binary ?? "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--web.enable-lifecycle",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stdout.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await vi.waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited:\n${log}`);
        expect((await fetch(`${url}/-/ready`)).status).toBe(200);
      },
      { timeout: 15_000, interval: 100 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const api = async <T>(path: string): Promise<T> => {
    const body = (await (await fetch(`${url}${path}`)).json()) as {
      status: string;
      error?: string;
      data: T;
    };
    if (body.status !== "success") throw new Error(`${path}: ${body.error ?? body.status}`);
    return body.data;
  };
  return {
    url,
    api,
    select: async (expr) => {
      const data = await api<{ result: { metric: Record<string, string> }[] }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
      return data.result
        .map(({ metric }) => [metric.stream, metric.group, metric.reason].filter(Boolean).join("/"))
        .sort();
    },
    stop,
  };
}
