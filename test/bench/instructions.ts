import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm, watch } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { runSweepPage } from "../../src/scripts/sweepPage.js";
import { freePort } from "../support/redisServer.js";
import { BENCH_FENCE, benchGroup, JANITOR_CONSUMER } from "./janitorSweep.js";
import type { SweepPath } from "./naiveLoop.js";
import { referenceOptions, referenceSweep } from "./referenceScript.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { copyStream, seedStuckPel } from "./seed.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const TEMPLATE = "template";
const STREAM = "orders";
const GROUP = "billing";
const PATHS: readonly SweepPath[] = ["requeue", "dead-letter"];

/**
 * `--only=i`: the CPU instructions Redis executes per swept entry, counted by callgrind
 * (valgrind), janitor script against the reference script, same PEL and same page size. Unlike
 * times, instruction counts do not depend on what else runs on the machine: the ratio of
 * scenario 1 on a quiet machine, without the quiet machine. Counts Redis only (not the client
 * nor the network). Needs valgrind; about a minute.
 */
async function startUnderCallgrind(dir: string) {
  const port = await freePort();
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${join(dir, "callgrind.out")}`,
      "redis-server",
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      // serverCron runs on wall-clock time, which valgrind stretches: keep its share small.
      "--hz",
      "1",
      "--dir",
      dir,
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  while (!output.includes("Ready to accept connections")) {
    if (child.exitCode !== null) throw new Error("redis-server under valgrind did not start");
    await once(child.stdout, "data");
  }
  const redis = new Redis({ port, host: "127.0.0.1", protocol: 2, commandTimeout: 600_000 });
  const control = (flag: string): void => {
    execFileSync("callgrind_control", [flag, String(child.pid)], { stdio: "ignore" });
  };
  let dumps = 0;
  /** Instructions executed since the last call (callgrind zeroes at each mark). */
  const instructionsSinceMark = async (): Promise<number> => {
    control("--dump");
    dumps += 1;
    const name = `callgrind.out.${dumps}`;
    // callgrind_control returns once the dump is requested; the file follows shortly. Re-read
    // it on every change of the directory until its summary line is there.
    const summary = async (): Promise<number | undefined> => {
      if (!(await readdir(dir)).includes(name)) return undefined;
      const match = /^summary: (\d+)/mu.exec(await readFile(join(dir, name), "utf8"));
      return match?.[1] === undefined ? undefined : Number(match[1]);
    };
    const changes = watch(dir, { signal: AbortSignal.timeout(10_000) });
    try {
      const ready = await summary();
      if (ready !== undefined) return ready;
      for await (const { filename } of changes) {
        if (filename !== null && filename !== name) continue;
        const found = await summary();
        if (found !== undefined) return found;
      }
    } catch (error) {
      if ((error as Error).name !== "AbortError") throw error;
    }
    throw new Error(`no callgrind dump ${name} within 10 s`);
  };
  return {
    redis,
    /** The same connection with the production scripts registered (once). */
    janitor: registerScripts(redis),
    mark: () => control("--zero"),
    instructionsSinceMark,
    stop: () => {
      redis.disconnect();
      child.kill("SIGKILL");
    },
  };
}

interface InstructionRun {
  path: SweepPath;
  approach: "janitor" | "reference";
  /** Which entries of the stream are pending: all, or one in `every` (the others acknowledged). */
  every: number;
  entries: number;
  calls: number;
  instructionsPerEntry: number;
}

type CallgrindServer = Awaited<ReturnType<typeof startUnderCallgrind>>;

/** One sweep of a working copy of `template` by one approach, counted by callgrind. */
async function measure(
  server: CallgrindServer,
  template: string,
  path: SweepPath,
  approach: InstructionRun["approach"],
  pageSize: number,
): Promise<{ entries: number; calls: number; instructions: number }> {
  const admin = server.redis;
  const group = benchGroup(STREAM, GROUP, path);
  await copyStream(admin, template, STREAM, group.deadLetterStream);
  const request = {
    group,
    janitorConsumer: JANITOR_CONSUMER,
    maxClaimed: pageSize,
    maxExamined: Number.MAX_SAFE_INTEGER,
    firstWindow: pageSize,
    // Calls are cut by the page size alone: valgrind stretches time some 50 times.
    budgetMs: 1_000_000,
    rotation: 0,
    fence: BENCH_FENCE,
  };
  // Loads the script (its compilation is not what is measured).
  await runSweepPage(server.janitor, { ...request, cursor: "0-0", maxClaimed: 0 });
  server.mark();
  let entries = 0;
  let calls = 0;
  if (approach === "janitor") {
    let cursor = "0-0";
    do {
      const page = await runSweepPage(server.janitor, { ...request, cursor });
      if (page.error !== undefined) throw new Error(page.error);
      entries += page.claimed;
      calls += 1;
      cursor = page.nextCursor;
    } while (cursor !== "0-0");
  } else {
    ({ entries, calls } = await referenceSweep(admin, referenceOptions(group, path, pageSize)));
  }
  return { entries, calls, instructions: await server.instructionsSinceMark() };
}

/**
 * A copy of `template` where only one entry in `every` is still pending: the shape several
 * consumers leave when one of them crashes (its entries alternate with acknowledged ones).
 */
async function interleavedTemplate(admin: Redis, template: string, every: number): Promise<string> {
  const name = `${template}:1-in-${every}`;
  await admin.call("COPY", template, name);
  const entries = (await admin.xrange(name, "-", "+")).map(([id]) => id);
  const acknowledged = entries.filter((_, i) => i % every !== 0);
  for (let i = 0; i < acknowledged.length; i += 1000) {
    await admin.xack(name, GROUP, ...acknowledged.slice(i, i + 1000));
  }
  return name;
}

export async function instructionsScenario(options: BenchOptions): Promise<ScenarioResult> {
  const size = options.quick ? 2_000 : 5_000;
  const pageSize = 250;
  const dir = await mkdtemp(join(tmpdir(), "sj-callgrind-"));
  const server = await startUnderCallgrind(dir);
  const runs: InstructionRun[] = [];
  try {
    const admin = server.redis;
    await admin.set(BENCH_FENCE.key, BENCH_FENCE.value);
    await seedStuckPel(admin, TEMPLATE, GROUP, size);
    const shapes: { every: number; paths: readonly SweepPath[] }[] = [
      { every: 1, paths: PATHS },
      { every: 2, paths: ["requeue"] },
      { every: 5, paths: ["requeue"] },
    ];
    for (const { every, paths } of shapes) {
      const template = every === 1 ? TEMPLATE : await interleavedTemplate(admin, TEMPLATE, every);
      const pending = Math.ceil(size / every);
      for (const path of paths) {
        for (const approach of ["janitor", "reference"] as const) {
          const { entries, calls, instructions } = await measure(
            server,
            template,
            path,
            approach,
            pageSize,
          );
          if (entries !== pending) {
            throw new Error(`${approach} ${path} 1 in ${every}: moved ${entries} of ${pending}`);
          }
          const instructionsPerEntry = instructions / pending;
          runs.push({ path, approach, every, entries, calls, instructionsPerEntry });
          options.log(
            `  ${path} 1 in ${every} ${approach}: ${fmt(instructionsPerEntry)} instructions/entry`,
          );
        }
      }
    }
  } finally {
    server.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const per = (path: SweepPath, approach: InstructionRun["approach"], every = 1): number =>
    runs.find((run) => run.path === path && run.approach === approach && run.every === every)
      ?.instructionsPerEntry ?? Number.NaN;
  const table: Table = {
    title: `I. Redis instructions per entry (callgrind), PEL ${size.toLocaleString("en-US")} idle entries, pages of ${pageSize}`,
    columns: ["path", "janitor", "reference script", "reference/janitor (>= 0.9)"],
    rows: PATHS.map((path) => [
      path,
      fmt(per(path, "janitor")),
      fmt(per(path, "reference")),
      fmt(per(path, "reference") / per(path, "janitor"), 3),
    ]),
    notes: [
      "Everything redis-server executes between the first and the last call of a sweep (commands, Lua, replies, its event loop), counted by valgrind's callgrind: independent of the machine's load. The janitor is the production sweepPage.lua with its production arguments and fence, its page fixed at the reference's size.",
      "The wall-clock ratio of scenario 1 adds the client's side and the round trips (the same number of calls for both).",
    ],
  };
  const interleaved: Table = {
    title:
      "I. Redis instructions per requeued entry when other entries lie between the pending ones",
    columns: ["pending", "janitor", "reference script", "reference/janitor"],
    rows: [2, 5].map((every) => [
      `1 in ${every} (the others acknowledged)`,
      fmt(per("requeue", "janitor", every)),
      fmt(per("requeue", "reference", every)),
      fmt(per("requeue", "reference", every) / per("requeue", "janitor", every), 3),
    ]),
    notes: [
      "A crashed consumer's entries alternate with entries other consumers acknowledged. The janitor reads the first 32 entries of a run with one XRANGE (requeue and dead-letter claim nothing); finding others in between, it handles the entries that read returned and claims as usual (XAUTOCLAIM with the bodies) from then on.",
    ],
  };
  const targets: TargetCheck[] = PATHS.map((path) => ({
    scenario: `I ${path} ${size.toLocaleString("en-US")} (instructions)`,
    target: "reference/janitor >= 0.9",
    measured: fmt(per(path, "reference") / per(path, "janitor"), 3),
    met: per(path, "reference") / per(path, "janitor") >= 0.9,
  }));
  return { name: "instructions", tables: [table, interleaved], targets, raw: { runs } };
}
