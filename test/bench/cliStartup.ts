import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { seedStuckPel } from "./seed.js";
import { median, percentile } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";
import { startRedis } from "../support/redisServer.js";

const execFileAsync = promisify(execFile);
const STREAM = "startup:orders";
const GROUP = "billing";
/** Pending entries of the one inspected group: enough for a consumer and an oldest entry. */
const PEL = 100;
/**
 * Start-up allowances over the baselines, ms (compared on medians): `--help` from issue 22,
 * item 6; `--version` and `inspect` from issue 33, item 11 (80 and 150 ms before).
 */
const HELP_ALLOWANCE_MS = 80;
const VERSION_ALLOWANCE_MS = 50;
const INSPECT_ALLOWANCE_MS = 100;

const PLAIN = "plain ioredis script";

/** A difference in ms with its sign. */
const signed = (ms: number): string => `${ms >= 0 ? "+" : ""}${fmt(ms, 0)}`;

interface Case {
  name: string;
  args: string[];
}

/** Wall time of one child process, spawn to exit, output buffered (as a shell would read it). */
async function wallMs(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  await execFileAsync(process.execPath, args, { env, maxBuffer: 16 * 1024 * 1024 });
  return performance.now() - started;
}

/**
 * `npm run bench -- --only=9`: CLI start-up (issue 22, item 6; issue 33, item 11). Wall time,
 * spawn to exit, of a bare `node -e ""`, `cli.js --version`, `cli.js --help`, `cli.js inspect
 * --config F` with one group configured, and the plain script of plainInspect.ts (ioredis and
 * the same commands).
 * The five run interleaved (the order rotates each round), 15 rounds (7 with --quick), against
 * one throwaway redis-server; the targets compare medians.
 */
export async function cliStartupScenario(options: BenchOptions): Promise<ScenarioResult> {
  const rounds = options.quick ? 7 : 15;
  const server = await startRedis();
  const redis = server.client();
  const dir = await mkdtemp(join(tmpdir(), "sj-bench-startup-"));
  try {
    await seedStuckPel(redis, STREAM, GROUP, PEL);
    const config = join(dir, "inspect.json");
    await writeFile(config, JSON.stringify({ groups: [{ stream: STREAM, group: GROUP }] }));
    const plain = fileURLToPath(new URL("plainInspect.js", import.meta.url));
    const env = { ...process.env, STREAM_JANITOR_REDIS_URL: server.url };
    const cases: Case[] = [
      { name: 'node -e ""', args: ["-e", ""] },
      { name: "cli.js --version", args: [options.cliPath, "--version"] },
      { name: "cli.js --help", args: [options.cliPath, "--help"] },
      { name: PLAIN, args: [plain, server.url, STREAM, GROUP] },
      { name: "cli.js inspect --config F", args: [options.cliPath, "inspect", "--config", config] },
    ];
    // One untimed run of each: the first spawn pays for cold file caches.
    for (const c of cases) await wallMs(c.args, env);
    const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    for (let round = 0; round < rounds; round += 1) {
      for (let index = 0; index < cases.length; index += 1) {
        const c = cases[(round + index) % cases.length];
        if (c !== undefined) samples.get(c.name)?.push(await wallMs(c.args, env));
      }
    }
    options.log(`cli start-up: ${rounds} rounds of ${cases.length} processes`);

    const stats = (name: string) => {
      const values = samples.get(name) ?? [];
      return { median: median(values), p90: percentile(values, 90), min: Math.min(...values) };
    };
    const bareName = cases[0]?.name ?? "";
    const bare = stats(bareName);
    const plainStats = stats(PLAIN);
    const baselineOf: Record<string, { name: string; allowance: number }> = {
      "cli.js --version": { name: "bare node", allowance: VERSION_ALLOWANCE_MS },
      "cli.js --help": { name: "bare node", allowance: HELP_ALLOWANCE_MS },
      "cli.js inspect --config F": { name: "plain script", allowance: INSPECT_ALLOWANCE_MS },
    };
    const targets: TargetCheck[] = [];
    const rows = cases.map((c) => {
      const own = stats(c.name);
      const target = baselineOf[c.name];
      if (target === undefined) {
        return [c.name, fmt(own.median, 0), fmt(own.p90, 0), fmt(own.min, 0), "-", "-", "-", "-"];
      }
      const base = target.name === "bare node" ? bare : plainStats;
      const overMedian = own.median - base.median;
      const overP90 = own.p90 - base.p90;
      // Round by round: the two ran seconds apart, so they shared the machine's load.
      const baseSamples = samples.get(target.name === "bare node" ? bareName : PLAIN) ?? [];
      const paired = median(
        (samples.get(c.name) ?? []).map((value, round) => value - (baseSamples[round] ?? NaN)),
      );
      const met = overMedian <= target.allowance;
      targets.push({
        scenario: "9. CLI start-up",
        target: `${c.name}: <= ${target.allowance} ms over ${target.name} (median)`,
        measured: `${signed(overMedian)} ms (paired ${signed(paired)})`,
        met,
      });
      return [
        c.name,
        fmt(own.median, 0),
        fmt(own.p90, 0),
        fmt(own.min, 0),
        `${target.name} +${target.allowance}`,
        `${signed(overMedian)} / ${signed(overP90)}`,
        signed(paired),
        met ? "yes" : "NO",
      ];
    });
    const table: Table = {
      title: `9. CLI start-up: wall ms, spawn to exit (${rounds} interleaved rounds)`,
      columns: [
        "process",
        "median",
        "p90",
        "min",
        "target (ms over)",
        "over baseline, median / p90",
        "paired, median of rounds",
        "met",
      ],
      rows,
      notes: [
        `cli.js: ${options.cliPath}`,
        `inspect and the plain script read one group (${STREAM}/${GROUP}, ${PEL} pending entries) and the lease on a local redis-server: 2 pipelines, 13 commands after CLIENT SETNAME and INFO`,
        "targets: issue 22, item 6 (--help) and issue 33, item 11 (--version, inspect), on the difference of the medians; paired: the median of the round-by-round differences (less sensitive to load)",
      ],
    };
    return { name: "CLI start-up", tables: [table], targets, raw: Object.fromEntries(samples) };
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
