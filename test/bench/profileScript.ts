import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Redis } from "ioredis";
import { startRedis } from "../support/redisServer.js";
import { BENCH_FENCE, benchGroup, JANITOR_CONSUMER } from "./janitorSweep.js";
import type { SweepPath } from "./naiveLoop.js";
import { readCommandStats, resetStats, SCRIPT_COMMANDS } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { copyStream, pendingCount, seedStuckPel } from "./seed.js";
import { fmt, type Table } from "./table.js";

/**
 * `--only=p` (not part of the default run): where the time of one sweepPage call goes. The real
 * script is cut short at successive points (text patches; a patch that no longer applies shows
 * n/a), and the proposed alternative without XAUTOCLAIM (profile/sweepPage.noAutoclaim.lua)
 * runs on the same PEL. Server µs per examined entry from commandstats, best of several rounds.
 */
const TEMPLATE = "template";
const STREAM = "orders";
const GROUP = "billing";
const BATCH = 100;

type Patch = (source: string) => string | undefined;

function insertAfterLine(pattern: RegExp, text: string): Patch {
  return (source) => {
    const match = pattern.exec(source);
    if (match === null) return undefined;
    const end = match.index + match[0].length;
    return `${source.slice(0, end)}\n${text}${source.slice(end)}`;
  };
}

/** empties: the variant must leave the PEL empty; copies: and write one copy per entry. */
const STAGES: { name: string; patch: Patch; empties: boolean; copies: boolean }[] = [
  {
    name: "window only: checks + XPENDING of the page",
    // Exclusive start: XPENDING takes `(id`, so the next page follows without nextId().
    patch: insertAfterLine(
      /^local windowSize = #window$/mu,
      "if windowSize > 0 then do return { windowSize == pageSize and ('(' .. window[windowSize][1]) or '0-0', windowSize, 0, 0, 0, 0, 0, 0, {}, {} } end end",
    ),
    empties: false,
    copies: false,
  },
  {
    name: "+ XAUTOCLAIM of the page (bodies into Lua)",
    patch: insertAfterLine(
      /^local claim = redis\.call\('XAUTOCLAIM'.*$/mu,
      "do return { claim[1], windowSize, 0, 0, 0, 0, 0, 0, {}, {} } end",
    ),
    empties: false,
    copies: false,
  },
  {
    name: "+ per-entry work and XACK, without the XADD calls",
    // The XADD of each copy: `redis.call(unpack(args))` or `redis.call(unpack(args, 1, n))`.
    patch: (source) => {
      const line = /^\s*redis\.call\(unpack\(args(?:, 1, n)?\)\)\n/mu;
      return line.test(source) ? source.replace(line, "") : undefined;
    },
    empties: true,
    copies: false,
  },
  {
    name: "+ XADD of the copies = sweepPage.lua as shipped",
    patch: (s) => s,
    empties: true,
    copies: true,
  },
];

interface StageResult {
  path: SweepPath;
  name: string;
  usecPerEntry: number;
  luaUsecPerEntry: number;
  entriesPerSecond: number;
  note: string;
}

async function runVariant(
  admin: Redis,
  source: string,
  path: SweepPath,
): Promise<{
  usec: number;
  inner: number;
  entries: number;
  seconds: number;
  left: number;
  copies: number;
}> {
  const sha = createHash("sha1").update(source).digest("hex");
  await admin.script("LOAD", source);
  const group = benchGroup(STREAM, GROUP, path);
  await copyStream(admin, TEMPLATE, STREAM);
  await admin.call("UNLINK", group.deadLetterStream);
  await resetStats(admin);
  let cursor = "0-0";
  let entries = 0;
  const started = performance.now();
  do {
    const reply = (await admin.evalsha(
      sha,
      4,
      STREAM,
      group.requeueStream,
      group.deadLetterStream,
      BENCH_FENCE.key,
      GROUP,
      JANITOR_CONSUMER,
      group.minIdleMs,
      cursor,
      BATCH,
      group.maxDeliveries,
      path,
      group.deadLetterMaxLen,
      BENCH_FENCE.value,
      0,
    )) as unknown[];
    cursor = String(reply[0]);
    entries += Number(reply[1]);
  } while (cursor !== "0-0");
  const seconds = (performance.now() - started) / 1000;
  const stats = await readCommandStats(admin);
  let inner = 0;
  for (const [name, stat] of Object.entries(stats)) {
    if (SCRIPT_COMMANDS.has(name) || name === "xrange") inner += stat.usec;
  }
  return {
    usec: stats.evalsha?.usec ?? Number.NaN,
    inner,
    entries,
    seconds,
    left: await pendingCount(admin, STREAM, GROUP),
    copies:
      path === "requeue"
        ? (await admin.xlen(STREAM)) - (await admin.xlen(TEMPLATE))
        : await admin.xlen(group.deadLetterStream),
  };
}

export async function profileScenario(options: BenchOptions): Promise<ScenarioResult> {
  const size = options.quick ? 20_000 : 50_000;
  const rounds = options.quick ? 3 : 5;
  const shipped = await readFile(
    new URL("../../src/redis/scripts/sweepPage.lua", import.meta.url),
    "utf8",
  );
  const proposed = await readFile(
    new URL("../../../../profile/sweepPage.noAutoclaim.lua", import.meta.url),
    "utf8",
  );
  const server = await startRedis();
  const admin = server.client();
  const results: StageResult[] = [];
  try {
    await admin.set(BENCH_FENCE.key, BENCH_FENCE.value);
    await seedStuckPel(admin, TEMPLATE, GROUP, size);
    for (const path of ["requeue", "dead-letter"] as const) {
      const variants = [
        ...STAGES.map((stage) => ({ ...stage, source: stage.patch(shipped) })),
        {
          name: "proposed: no XAUTOCLAIM (XRANGE bodies)",
          source: proposed,
          empties: true,
          copies: true,
        },
      ];
      for (const variant of variants) {
        if (variant.source === undefined) {
          results.push({
            path,
            name: variant.name,
            usecPerEntry: Number.NaN,
            luaUsecPerEntry: Number.NaN,
            entriesPerSecond: Number.NaN,
            note: "n/a: the script changed, the patch no longer applies",
          });
          continue;
        }
        const measured: Awaited<ReturnType<typeof runVariant>>[] = [];
        for (let round = 0; round < rounds; round += 1) {
          measured.push(await runVariant(admin, variant.source, path));
        }
        const best = measured.reduce((a, b) => (b.usec / b.entries < a.usec / a.entries ? b : a));
        const left = measured[0]?.left ?? 0;
        const copies = measured[0]?.copies ?? 0;
        results.push({
          path,
          name: variant.name,
          usecPerEntry: best.usec / best.entries,
          luaUsecPerEntry: (best.usec - best.inner) / best.entries,
          entriesPerSecond: Math.max(...measured.map((run) => run.entries / run.seconds)),
          note:
            variant.empties && (left !== 0 || copies !== (variant.copies ? size : 0))
              ? `WRONG: ${left} left pending, ${copies} copies`
              : variant.empties
                ? `PEL emptied, ${copies.toLocaleString("en-US")} copies`
                : "partial work (PEL left as it was)",
        });
        options.log(`  ${path} ${variant.name}: ${fmt(best.usec / best.entries, 2)} µs/entry`);
      }
    }
  } finally {
    await server.stop();
  }
  const rows: (string | number)[][] = [];
  let previous: StageResult | undefined;
  for (const result of results) {
    const staged = STAGES.some((stage) => stage.name === result.name);
    const delta =
      staged && previous !== undefined && previous.path === result.path
        ? fmt(result.usecPerEntry - previous.usecPerEntry, 2)
        : "";
    rows.push([
      result.path,
      result.name,
      fmt(result.usecPerEntry, 2),
      delta,
      fmt(result.luaUsecPerEntry, 2),
      Number.isNaN(result.entriesPerSecond) ? "n/a" : Math.round(result.entriesPerSecond),
      result.note,
    ]);
    previous = staged ? result : undefined;
  }
  const table: Table = {
    title: `P. Profile of one sweepPage call (PEL ${size.toLocaleString("en-US")}, batch ${BATCH}, best of ${rounds})`,
    columns: [
      "path",
      "script variant",
      "server µs/entry",
      "added by this stage",
      "of which Lua itself",
      "entries/s (client loop)",
      "outcome",
    ],
    rows,
    notes: [
      "Lua itself = EVALSHA time minus the commands the script calls: the interpreter, building arguments, and turning replies into Lua tables.",
      "The entries/s column calls EVALSHA in a bare loop from the bench (no sweepOnce), best round.",
    ],
  };
  return { name: "profile", tables: [table], targets: [], raw: { size, rounds, results } };
}
