import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChaosReport } from "./report.js";
import { PROJECT_ROOT as ROOT } from "./root.js";

/** A defect planted in a copy of the built scripts: one change, and what must catch it. */
export interface PlantedDefect {
  name: string;
  file: string;
  find: string;
  replace: string;
  /** The checker must name at least one of these invariants. */
  caughtBy: readonly string[];
}

export const PLANTED_DEFECTS: readonly PlantedDefect[] = [
  {
    name: "skip-requeue-ack",
    file: "scripts/lua/includes/sweepActions.lua",
    // The requeue action: the copy is written, the original's XACK is not queued.
    find: "  ackCount = ackCount + 1\n  acks[ackCount] = id\n  if recordCopies then",
    replace: "  if recordCopies then",
    // The original stays pending for ever (requeued again at each claim), and a healthy entry's
    // copy and original can both be acknowledged.
    caughtBy: [
      "pending-at-quiescence",
      "acked-twice",
      "acked-and-dead-lettered",
      "dead-lettered-twice",
      "over-delivered",
    ],
  },
  {
    name: "drop-fence-check",
    file: "scripts/lua/includes/fence.lua",
    // One server: the lease value is no longer compared, so a stale leader writes.
    find: "  if redis.call('GET', key) ~= value then return 'the lease is not held by this process', nil end\n",
    replace: "",
    caughtBy: ["fence-not-held"],
  },
  {
    name: "count-delivery-twice",
    file: "scripts/lua/sweepPage.lua",
    // Each claim counts the entry's last delivery twice: copies carry, and dead letters show, one
    // delivery more per incarnation than happened, and entries reach maxDeliveries early.
    find: "local originalId, deliveries = id, entry[4]\n",
    replace: "local originalId, deliveries = id, entry[4] + 1\n",
    caughtBy: ["miscounted-deliveries", "collateral-dead-letter"],
  },
  {
    name: "trim-lane-past-unacked",
    file: "scripts/lua/trimRetryLane.lua",
    // The floor ignores the lane's pending copies: everything delivered goes, acknowledged or not,
    // and a copy whose consumer crashed or is still at work loses its body.
    find: "if owner == nil then return { 0, length, 0 } end\n",
    replace:
      "if owner == nil then return { 0, length, 0 } end\nfloor = nextId(owner['last-delivered-id'])\n",
    caughtBy: ["pending-entry-removed", "lost"],
  },
];

/** Throws unless the text the defect changes is in the built file exactly once. */
export async function checkDefect(
  defect: PlantedDefect,
  dist = join(ROOT, "dist"),
): Promise<string> {
  const source = await readFile(join(dist, defect.file), "utf8");
  if (source.split(defect.find).length !== 2) {
    throw new Error(
      `planted defect ${defect.name}: the text to change is not once in ${defect.file}`,
    );
  }
  return source;
}

/** dist/ copied to a temporary folder with the defect in place; returns the copy's cli.js. */
export async function plantDefect(
  defect: PlantedDefect,
): Promise<{ cli: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `sj-chaos-${defect.name}-`));
  await cp(join(ROOT, "dist"), join(dir, "dist"), { recursive: true });
  await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const source = await checkDefect(defect, join(dir, "dist"));
  await writeFile(join(dir, "dist", defect.file), source.replace(defect.find, defect.replace));
  return {
    cli: join(dir, "dist", "cli.js"),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Whether a run against a planted defect named one of the invariants that must catch it. */
export function caught(defect: PlantedDefect, report: ChaosReport): string | undefined {
  return report.violations.find((v) => defect.caughtBy.includes(v.invariant))?.invariant;
}
