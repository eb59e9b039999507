import { gzipBody } from "../../src/http/gzipBody.js";
import type { GroupStatusReport, StatusReport } from "../../src/core/groupStatus.js";
import { GroupHistory } from "../../src/status/GroupHistory.js";
import type { ReadableSample } from "../../src/status/StatusSample.js";
import { parseOverviewQuery } from "../../src/ui/overviewQuery.js";
import { renderOverview } from "../../src/ui/renderOverview.js";
import { SweepLog } from "../../src/ui/SweepLog.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { median, percentile } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

/**
 * Scenario h (`npm run bench -- --only=h`): what the console's history (README "Web console")
 * costs, in process, at its worst: every group with a full window, every minute known, values
 * that wander (a random walk compresses worst). Memory: the process's heap and external bytes
 * after a forced GC, before and after filling the history of N groups, and after the groups
 * went away. The overview: GET /ui?per=1000's rendering and gzip (the server's level), with
 * and without the sparklines, for 1,000 groups.
 */
const MINUTE = 60_000;
const END = 1_700_000_000_000 - (1_700_000_000_000 % MINUTE) + 59 * MINUTE;

/** A small deterministic generator (mulberry32), so runs draw the same lines. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const id = (i: number): string => `tenant:${i}:events/workers`;

function sample(atMs: number, lag: number): ReadableSample {
  return {
    readable: true,
    atMs,
    lag,
    pending: Math.round(lag / 3),
    due: 1,
    oldestPendingIdleMs: 1000,
    deadLetters: Math.round(lag / 10),
    retryLane: null,
    lastDeliveredId: "1-0",
    entriesRead: 1,
    consumerCount: 1,
    minConsumerIdleMs: 1,
  };
}

/** `groups` with `minutes` of samples and sweeps each, every minute known. */
function fill(history: GroupHistory, groups: number, minutes: number): void {
  const next = random(42);
  for (let i = 0; i < groups; i += 1) {
    let lag = Math.round(next() * 2000);
    const [stream = "", group = ""] = id(i).split("/");
    for (let m = minutes - 1; m >= 0; m -= 1) {
      lag = Math.max(0, lag + Math.round((next() - 0.5) * 200));
      const atMs = END - m * MINUTE;
      history.recordSample(id(i), sample(atMs, lag), true);
      const claimed = Math.round(next() * 50);
      history.recordSweep({ stream, group, claimed, requeued: claimed, deadLettered: 1 }, atMs);
    }
  }
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

function used(): { heap: number; external: number } {
  gc();
  gc();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, external: usage.external };
}

interface MemoryRow {
  groups: number;
  minutes: number;
  pointMb: number;
  heapMb: number;
  externalMb: number;
  totalMb: number;
  afterRemovalMb: number;
}

function measureMemory(groups: number, minutes: number): MemoryRow {
  const before = used();
  const history = new GroupHistory(minutes);
  fill(history, groups, minutes);
  const after = used();
  const mb = (bytes: number) => bytes / 2 ** 20;
  const heapMb = mb(after.heap - before.heap);
  const externalMb = mb(after.external - before.external);
  const pointMb = mb(history.pointBytes());
  history.keepOnly(new Set());
  const removed = used();
  const afterRemovalMb = mb(removed.heap - before.heap + removed.external - before.external);
  return {
    groups,
    minutes,
    pointMb,
    heapMb,
    externalMb,
    totalMb: heapMb + externalMb,
    afterRemovalMb,
  };
}

function report(groups: number): StatusReport {
  const sampled = { pending: 3, due: 0, oldestPendingIdleMs: 1000, deadLetters: 1 };
  const rows: GroupStatusReport[] = Array.from({ length: groups }, (_, i) => {
    const [stream = "", group = ""] = id(i).split("/");
    const sample = { ...sampled, lag: i, retryLane: null, lastDeliveredId: "1-0" };
    return { stream, group, status: "OK", reason: "keeps up", since: END, sample };
  });
  return {
    generatedAt: END,
    leader: { isLeader: true, instance: "bench:1", fencingToken: 1 },
    server: { product: "redis", version: "7.0.15", mode: "standalone", capabilities: {} },
    sampling: { intervalMs: 10_000, window: 10 },
    groups: rows,
  };
}

interface RenderRow {
  what: string;
  p50Ms: number;
  p95Ms: number;
  gzipKb: number;
  rawKb: number;
}

async function measureRender(
  what: string,
  runs: number,
  history?: GroupHistory,
): Promise<RenderRow> {
  const view = {
    report: report(1000),
    sweeps: new SweepLog(),
    query: parseOverviewQuery(new URLSearchParams("per=1000")),
    refreshSeconds: 10,
    ...(history && { history }),
  };
  const times: number[] = [];
  let page = "";
  let gzipBytes = 0;
  for (let i = 0; i <= runs; i += 1) {
    const started = performance.now();
    page = renderOverview(view);
    gzipBytes = (await gzipBody(page)).length;
    // The first run warms the templates' caches and the JIT.
    if (i > 0) times.push(performance.now() - started);
  }
  return {
    what,
    p50Ms: median(times),
    p95Ms: percentile(times, 95),
    gzipKb: gzipBytes / 1024,
    rawKb: Buffer.byteLength(page) / 1024,
  };
}

export async function historyCostScenario(options: BenchOptions): Promise<ScenarioResult> {
  options.log("  history memory");
  const memory = [measureMemory(1_000, 60), measureMemory(10_000, 60)];
  if (!options.quick) memory.push(measureMemory(10_000, 360));
  options.log("  overview rendering, 1,000 groups");
  const history = new GroupHistory(60);
  fill(history, 1000, 60);
  const runs = options.quick ? 10 : 30;
  const renders = [
    await measureRender("/ui?per=1000, no history", runs),
    await measureRender("/ui?per=1000, 60-min sparklines", runs, history),
  ];
  const memoryTable: Table = {
    title: "Console history: memory (every minute of the window known)",
    columns: [
      "groups",
      "minutes",
      "points MB",
      "heap MB",
      "external MB",
      "total MB",
      "after removal MB",
    ],
    rows: memory.map((m) => [
      m.groups,
      m.minutes,
      fmt(m.pointMb),
      fmt(m.heapMb),
      fmt(m.externalMb),
      fmt(m.totalMb),
      fmt(m.afterRemovalMb),
    ]),
    notes: [
      "process.memoryUsage() after two forced GCs (node --expose-gc), minus the same before filling: heapUsed (the Map, one small object per group) and external (the Float32Array rings, outside the V8 heap and its --max-old-space-size cap). Points: 7 series × minutes × 4 bytes per group. After removal: what stays once every group went away (keepOnly).",
    ],
  };
  const renderTable: Table = {
    title:
      "Console history: the overview of 1,000 groups, rendered in process (gzip at the server's level)",
    columns: ["page", "p50 ms", "p95 ms", "gzip KB", "raw KB"],
    rows: renders.map((r) => [r.what, fmt(r.p50Ms), fmt(r.p95Ms), fmt(r.gzipKb), fmt(r.rawKb)]),
    notes: [
      "Render plus gzip, no HTTP: the daemon's page time is this plus the request (scenario u).",
    ],
  };
  const tenThousand = memory.find((m) => m.groups === 10_000 && m.minutes === 60);
  const withSparklines = renders[1];
  const targets: TargetCheck[] = [];
  if (tenThousand !== undefined) {
    targets.push({
      scenario: "h history, 10,000 groups, 60 min",
      target: "<= 20 MB",
      measured: `${fmt(tenThousand.totalMb)} MB`,
      met: tenThousand.totalMb <= 20,
    });
  }
  if (withSparklines !== undefined) {
    targets.push(
      {
        scenario: "h /ui?per=1000 with sparklines",
        target: "p50 < 150 ms",
        measured: `${fmt(withSparklines.p50Ms)} ms`,
        met: withSparklines.p50Ms < 150,
      },
      {
        scenario: "h /ui?per=1000 with sparklines",
        target: "< 300 KB gzip",
        measured: `${fmt(withSparklines.gzipKb)} KB`,
        met: withSparklines.gzipKb < 300,
      },
    );
  }
  return {
    name: "console history",
    tables: [memoryTable, renderTable],
    targets,
    raw: { memory, renders },
  };
}
