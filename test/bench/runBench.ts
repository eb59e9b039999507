/**
 * `npm run bench [-- --quick] [-- --only=1,3]`: the benchmarks of the issue "Benchmarks", each a
 * ratio or a curve from one run. Every scenario starts its own throwaway redis-server. Tables go
 * to stdout (markdown), progress to stderr, raw results to test/bench/results/ (git-ignored).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { backoffScenario } from "./backoff.js";
import { backoffBodiesScenario } from "./backoffBodies.js";
import { cliStartupScenario } from "./cliStartup.js";
import { clusterScenario } from "./cluster.js";
import { discoveryScenario } from "./discoveryScan.js";
import { idleFleetScenario } from "./idleFleet.js";
import { instructionsScenario } from "./instructions.js";
import { leaderMemoryScenario } from "./leaderMemory.js";
import { leaseScenario } from "./leaseTakeover.js";
import { memoryScenario } from "./memory.js";
import { observabilityScenario } from "./observability.js";
import { sparseScenario } from "./sparse.js";
import { statusCostScenario } from "./statusCost.js";
import { operatorScenario } from "./operatorCommands.js";
import { redriveTaskScenario } from "./redriveTasks.js";
import { redisImpactScenario } from "./redisImpact.js";
import { scrapeReadsScenario } from "./scrapeReads.js";
import type { BenchOptions, Scenario, ScenarioResult } from "./scenario.js";
import { renderTable, targetsTable } from "./table.js";
import { throughputScenario } from "./throughput.js";
import { tlsCostScenario } from "./tlsCost.js";
import { webConsoleScenario } from "./webConsole.js";
import { historyCostScenario } from "./historyCost.js";

const SCENARIOS: Record<string, Scenario> = {
  "1": throughputScenario,
  "2": redisImpactScenario,
  "3": memoryScenario,
  "4": observabilityScenario,
  "5": leaseScenario,
  "6": tlsCostScenario,
  "7": sparseScenario,
  "8": discoveryScenario,
  "9": cliStartupScenario,
  "10": backoffScenario,
};
/**
 * Run only on request: `--only=o`, what the operator commands cost (redrive throughput, inspect
 * on a 1,000,000-entry PEL); `--only=c`, Redis Cluster (three masters against one server);
 * `--only=i`, Redis instructions per swept entry under callgrind (needs valgrind), janitor
 * against the reference script, whatever the machine's load; `--only=s`, what the group status
 * costs Redis and /metrics at 1,000 groups; `--only=u`, the web console (page latency and size at
 * 1,000 and 10,000 groups, Redis commands per page view); `--only=b`, backoff with 1 KB and 5 MB
 * waiting entries (longest call, body reads); `--only=f`, one sweep pass over 10,000 idle groups
 * and with 1 % of them due; `--only=l`, the leader of 1,000 and 10,000 discovered groups under
 * the image's heap cap, scraped every 5 s (BENCH_LEADER_SECONDS long); `--only=t`, a redrive
 * task against today's synchronous redrive (10,000 dead letters) and its batches' Redis time;
 * `--only=r`, the scrape's read of 1,000 groups per read path, one server and Cluster;
 * `--only=h`, the console's history (memory at 1,000 and 10,000 groups, the overview's
 * sparklines for 1,000 groups), in process.
 */
const OPTIONAL: Record<string, Scenario> = {
  o: operatorScenario,
  c: clusterScenario,
  i: instructionsScenario,
  s: statusCostScenario,
  u: webConsoleScenario,
  b: backoffBodiesScenario,
  f: idleFleetScenario,
  l: leaderMemoryScenario,
  t: redriveTaskScenario,
  r: scrapeReadsScenario,
  h: historyCostScenario,
};

/** The repository root, from test/bench/results/build/test/bench/runBench.js. */
const ROOT = new URL("../../../../../../", import.meta.url);
/** The compiled sources next to this file: build/src. */
const BUILD_SRC = new URL("../../src/", import.meta.url);
const RESULTS = new URL("../../../", import.meta.url);

/**
 * The build holds src compiled with the bench, so in-process and child-process scenarios measure
 * the same code; the scripts and a package.json (type module, version) are copied next to it.
 */
function prepareBuild(): void {
  cpSync(new URL("src/scripts/lua/", ROOT), new URL("scripts/lua/", BUILD_SRC), {
    recursive: true,
  });
  const pkg = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as {
    name: string;
    version: string;
  };
  writeFileSync(
    new URL("../package.json", BUILD_SRC),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, type: "module" })}\n`,
  );
}

function versionOf(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

/** Installed versions of the runtime dependencies (from node_modules). */
function packageVersions(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const versions: Record<string, string> = {};
  for (const name of Object.keys(pkg.dependencies ?? {})) {
    try {
      const installed = JSON.parse(
        readFileSync(new URL(`node_modules/${name}/package.json`, ROOT), "utf8"),
      ) as { version: string };
      versions[name] = installed.version;
    } catch {
      versions[name] = "not installed";
    }
  }
  return versions;
}

function machine(): Record<string, unknown> {
  return {
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    redis: versionOf("redis-server", ["--version"]),
    packages: packageVersions(),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      daemon: { type: "string", default: "build" },
    },
  });
  prepareBuild();
  // build | dist | the path of another cli.js (e.g. a production-only install of the package).
  const cliPath =
    values.daemon === "dist"
      ? fileURLToPath(new URL("dist/cli.js", ROOT))
      : values.daemon === "build"
        ? fileURLToPath(new URL("cli.js", BUILD_SRC))
        : values.daemon;
  if (!existsSync(cliPath)) throw new Error(`daemon executable not found: ${cliPath}`);
  const options: BenchOptions = {
    quick: values.quick,
    cliPath,
    log: (message) => process.stderr.write(`${message}\n`),
  };
  const load = loadavg()[0] ?? 0;
  if (load > 1) {
    options.log(
      `warning: load average ${load.toFixed(2)} on ${cpus().length} CPUs: other processes will skew the timings`,
    );
  }
  const selected = (values.only ?? Object.keys(SCENARIOS).join(",")).split(",");
  const started = performance.now();
  const results: ScenarioResult[] = [];
  for (const key of selected) {
    const scenario = SCENARIOS[key.trim()] ?? OPTIONAL[key.trim()];
    if (scenario === undefined) throw new Error(`unknown scenario ${key}: use 1-9, o, c or i`);
    options.log(`scenario ${key}...`);
    const scenarioStarted = performance.now();
    const loadBefore = loadavg()[0] ?? 0;
    const result = await scenario(options);
    result.seconds = (performance.now() - scenarioStarted) / 1000;
    result.loadAverage = { before: loadBefore, after: loadavg()[0] ?? 0 };
    options.log(
      `scenario ${key} done in ${result.seconds.toFixed(1)} s ` +
        `(load average ${loadBefore.toFixed(2)} before, ${result.loadAverage.after.toFixed(2)} after)`,
    );
    results.push(result);
    for (const table of result.tables) process.stdout.write(`\n${renderTable(table)}`);
  }
  const targets = results.flatMap((result) => result.targets);
  const totalSeconds = (performance.now() - started) / 1000;
  const summary = targets.length > 0 ? renderTable(targetsTable(targets)) : "";
  const loads = results
    .map((result) => {
      const { before = Number.NaN, after = Number.NaN } = result.loadAverage ?? {};
      return `${result.name} ${before.toFixed(2)}/${after.toFixed(2)}`;
    })
    .join(", ");
  process.stdout.write(
    `\n${summary}\nTotal ${totalSeconds.toFixed(0)} s. Load average (1 min) before/after each scenario: ${loads}\n`,
  );

  mkdirSync(RESULTS, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/gu, "-");
  const report = {
    startedAt: new Date(Date.now() - totalSeconds * 1000).toISOString(),
    command: `npm run bench${values.quick || values.only !== undefined ? " --" : ""}${values.quick ? " --quick" : ""}${values.only === undefined ? "" : ` --only=${values.only}`}`,
    quick: values.quick,
    daemon: cliPath,
    machine: machine(),
    totalSeconds,
    targets,
    scenarios: results,
  };
  const json = `${JSON.stringify(report, null, 1)}\n`;
  const info = report.machine;
  const header = [
    `# stream-janitor bench, ${report.startedAt}`,
    "",
    `Command: \`${report.command}\`; ${String(info.nproc)} CPUs (${String(info.cpuModel)}), ${String(info.memoryGiB)} GiB; node ${String(info.node)}; ${String(info.redis)}.`,
    `Total ${totalSeconds.toFixed(0)} s. Load average (1 min) before/after each scenario: ${loads}.`,
    "",
  ].join("\n");
  const markdown = [
    header,
    ...results.flatMap((result) => result.tables.map(renderTable)),
    summary,
  ].join("\n");
  const latest =
    values.only !== undefined
      ? `latest-only-${values.only.replace(/[^a-z0-9]+/giu, "-")}`
      : values.quick
        ? "latest-quick"
        : "latest";
  for (const name of [`bench-${stamp}`, latest]) {
    writeFileSync(new URL(`${name}.json`, RESULTS), json);
    writeFileSync(new URL(`${name}.md`, RESULTS), markdown);
  }
  options.log(`raw results: ${fileURLToPath(new URL(`bench-${stamp}.json`, RESULTS))}`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
