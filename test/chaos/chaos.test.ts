import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand, UsageError } from "./options.js";
import { PROJECT_ROOT } from "./root.js";
import { runChaos, type ChaosOptions } from "./runChaos.js";
import { caught, checkDefect, plantDefect, PLANTED_DEFECTS } from "./selfTest.js";

/**
 * `npm run chaos` in CI: one short fixed-seed schedule against the built CLI passes every
 * invariant, and the self-test's fastest planted defect (a requeue that never acknowledges the
 * original) is caught. Longer schedules are run by hand (README, "Chaos test").
 */
const SEED = 7;
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function options(cli: string, durationMs: number): Promise<ChaosOptions> {
  const outDir = await mkdtemp(join(tmpdir(), "sj-chaos-test-"));
  cleanup.push(() => rm(outDir, { recursive: true, force: true }));
  const topology = "standalone";
  return {
    seed: SEED,
    topology,
    durationMs,
    outDir,
    cli,
    maxBodyBytes: 64 * 1024,
    quietMs: 30_000,
    minEntries: 0,
  };
}

describe("npm run chaos (standalone)", () => {
  it("runs the three topologies and refuses any other, naming the ones it runs (exit 2)", () => {
    expect(() => parseCommand(["--topology", "ring"])).toThrow(UsageError);
    expect(() => parseCommand(["--topology", "ring"])).toThrow(
      /expected standalone, sentinel or cluster, got ring/u,
    );
    expect(parseCommand(["--topology", "sentinel"])).toMatchObject({ topology: "sentinel" });
    expect(parseCommand(["--topology", "cluster"])).toMatchObject({ topology: "cluster" });
    expect(parseCommand(["--seed", "5", "--duration", "2m"])).toMatchObject({
      seed: 5,
      durationMs: 120_000,
    });
  });

  it("every planted defect of the self-test still finds its one line in the build", async () => {
    expect(PLANTED_DEFECTS.map((d) => d.name)).toEqual([
      "skip-requeue-ack",
      "drop-fence-check",
      "count-delivery-twice",
      "trim-lane-past-unacked",
    ]);
    for (const defect of PLANTED_DEFECTS) await checkDefect(defect);
  });

  it("a 25 s schedule of faults against 3 janitors and the README's loops: every invariant holds", async () => {
    // At least 150 entries however busy the host: a starved one writes the rest after the
    // schedule's faults (it wrote 49 to 99 in 25 s at load 20 to 38 before).
    const cli = join(PROJECT_ROOT, "dist", "cli.js");
    const report = await runChaos({ ...(await options(cli, 25_000)), minEntries: 150 });
    expect(report.counts.produced).toBeGreaterThan(100);
    expect(Object.values(report.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
    expect(report.violations, JSON.stringify(report.slowCommands)).toEqual([]);
  }, 150_000);

  it("self-test: a sweep that requeues without acknowledging the original is caught", async () => {
    const defect = PLANTED_DEFECTS[0];
    if (defect === undefined) throw new Error("no planted defect");
    const planted = await plantDefect(defect);
    cleanup.push(planted.remove);
    const report = await runChaos({ ...(await options(planted.cli, 12_000)), quietMs: 8000 });
    expect(report.ok).toBe(false);
    expect(caught(defect, report), JSON.stringify(report.violations.slice(0, 3))).toBeDefined();
  }, 150_000);
});
