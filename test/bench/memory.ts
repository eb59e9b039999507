import { waitFor } from "../support/waitFor.js";
import { startRedis } from "../support/redisServer.js";
import { daemonConfig, memoryStatus, startDaemonChild } from "./daemonProcess.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { pendingCount, seedStuckPel } from "./seed.js";
import { max } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const STREAM = "orders";
const GROUP = "billing";
const LIMIT_MB = 150;
/** Without a PEL, how long the idle daemon is watched (several sweeps at intervalMs 100). */
const IDLE_WATCH_MS = 3000;

interface MemoryRun {
  size: number;
  startRssMb: number;
  maxSampledRssMb: number;
  peakRssMb: number;
  endRssMb: number;
  sweepSeconds: number;
  entriesPerSecond: number;
  samples: { ms: number; rssMb: number; pending: number }[];
}

const mb = (kb: number): number => kb / 1024;

async function measure(options: BenchOptions, size: number): Promise<MemoryRun> {
  const server = await startRedis();
  const admin = server.client();
  try {
    if (size > 0) await seedStuckPel(admin, STREAM, GROUP, size);
    else await admin.call("XGROUP", "CREATE", STREAM, GROUP, "$", "MKSTREAM");
    const child = await startDaemonChild(
      options.cliPath,
      daemonConfig(server.url, {
        sweep: { intervalMs: 100 },
        groups: [{ stream: STREAM, group: GROUP, minIdleMs: 1, action: "requeue" }],
      }),
    );
    const samples: MemoryRun["samples"] = [];
    const started = performance.now();
    let pending = size;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const status = await memoryStatus(child.pid);
        if (status !== undefined) {
          samples.push({ ms: performance.now() - started, rssMb: mb(status.rssKb), pending });
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    try {
      if (size > 0) {
        await waitFor(
          async () => {
            pending = await pendingCount(admin, STREAM, GROUP);
            return pending === 0;
          },
          { timeoutMs: 300_000, what: `the daemon to sweep ${size} entries`, intervalMs: 50 },
        );
      } else {
        await new Promise((resolve) => setTimeout(resolve, IDLE_WATCH_MS));
      }
    } finally {
      sampling = false;
      await sampler;
    }
    const sweepSeconds = (performance.now() - started) / 1000;
    const status = await memoryStatus(child.pid);
    await child.stop();
    const rss = samples.map((sample) => sample.rssMb);
    return {
      size,
      startRssMb: samples[0]?.rssMb ?? Number.NaN,
      maxSampledRssMb: max(rss),
      peakRssMb: status === undefined ? Number.NaN : mb(status.hwmKb),
      endRssMb: status === undefined ? Number.NaN : mb(status.rssKb),
      sweepSeconds,
      entriesPerSecond: size / sweepSeconds,
      samples,
    };
  } finally {
    await server.stop();
  }
}

export async function memoryScenario(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = options.quick ? [0, 10_000, 100_000] : [0, 100_000, 1_000_000];
  const runs: MemoryRun[] = [];
  for (const size of sizes) {
    const run = await measure(options, size);
    runs.push(run);
    options.log(
      `  PEL ${size}: VmHWM ${fmt(run.peakRssMb)} MB, swept in ${fmt(run.sweepSeconds)} s`,
    );
  }
  const table: Table = {
    title:
      "3. Memory: daemon child process (`run`, sweep.intervalMs 100, batchSize 100, minIdleMs 1)",
    columns: [
      "PEL size",
      "RSS at start MB",
      "max sampled VmRSS MB",
      "VmHWM (peak RSS) MB",
      "RSS at end MB",
      "time to empty PEL s",
      "entries/s end to end",
    ],
    rows: runs.map((run) => [
      run.size.toLocaleString("en-US"),
      fmt(run.startRssMb),
      fmt(run.maxSampledRssMb),
      fmt(run.peakRssMb),
      fmt(run.endRssMb),
      run.size === 0 ? `(idle ${IDLE_WATCH_MS / 1000} s)` : fmt(run.sweepSeconds, 2),
      run.size === 0 ? "-" : run.entriesPerSecond,
    ]),
    notes: [
      "A fresh child process per PEL size, so VmHWM is that size's peak. RSS sampled every 50 ms from /proc/<pid>/status.",
      "End to end includes process start-up, lease acquisition and sweeps of maxEntriesPerGroup 100,000 every 100 ms.",
    ],
  };
  const largest = runs[runs.length - 1];
  const targets: TargetCheck[] =
    largest === undefined
      ? []
      : [
          {
            scenario: `3 peak RSS, PEL ${largest.size.toLocaleString("en-US")}`,
            target: `< ${LIMIT_MB} MB`,
            measured: `${fmt(largest.peakRssMb)} MB`,
            met: largest.peakRssMb < LIMIT_MB,
          },
        ];
  return { name: "memory", tables: [table], targets, raw: { runs } };
}
