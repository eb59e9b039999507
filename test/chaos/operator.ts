import { execFile } from "node:child_process";
import type { Redis } from "ioredis";
import { CHAOS_GROUPS, historyKey, type ChaosGroup } from "./groups.js";
import type { LocalHistory } from "./localHistory.js";

/**
 * The groups a redrive may put work back into: their requeue target is read by them alone (the
 * lane for billing, the source for the others). shipping reassigns on `orders`, which billing
 * reads too, so its dead letters are only purged.
 */
const REDRIVABLE = new Set(["billing", "workers", "couriers"]);
/** How many of the oldest dead letters the operator looks at (bodies are read: keep it short). */
const LOOK_AT = 20;

function run(cli: string, args: readonly string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, out: `${stdout}${stderr}`.trim() });
    });
  });
}

/** One dead letter of `group` (its id, its entry's key), drawn with `pick`; undefined: none. */
async function deadLetterOf(
  redis: Redis,
  group: ChaosGroup,
  pick: number,
): Promise<{ id: string; key: string } | undefined> {
  const entries = (await redis.xrange(group.deadLetters, "-", "+", "COUNT", LOOK_AT)) as [
    string,
    string[],
  ][];
  const mine = entries.flatMap(([id, fields]) => {
    const value = (name: string) => fields[fields.indexOf(name) + 1] ?? "";
    return value("x-original-group") === group.group ? [{ id, key: value("k") }] : [];
  });
  return mine[Math.floor(pick * mine.length)];
}

/**
 * An operator at work during the run: `dlq redrive --id` or `dlq purge --id` of one dead letter
 * (the built CLI, its own configuration straight to Redis). What took effect goes to the history
 * ("key group dead-letter-id ms"), which the checker accounts for: a purged entry is neither
 * acknowledged nor dead-lettered, named by the purge; a redriven one starts its deliveries again.
 */
export async function operate(
  kind: "redrive" | "purge",
  random: () => number,
  on: { redis: Redis; cli: string; config: string; local?: LocalHistory },
): Promise<string> {
  const candidates = CHAOS_GROUPS.filter((g) => kind === "purge" || REDRIVABLE.has(g.group));
  // The first group with a dead letter, from one drawn at random.
  const start = Math.floor(random() * candidates.length);
  const pick = random();
  let group: ChaosGroup | undefined;
  let letter: { id: string; key: string } | undefined;
  for (let i = 0; i < candidates.length && letter === undefined; i += 1) {
    group = candidates[(start + i) % candidates.length];
    if (group !== undefined) letter = await deadLetterOf(on.redis, group, pick);
  }
  if (group === undefined || letter === undefined) return `no dead letter to ${kind}`;
  const selector = ["--stream", group.stream, "--group", group.group, "--id", letter.id];
  const args = ["dlq", kind, ...selector, "--json", "--config", on.config];
  const { code, out } = await run(on.cli, kind === "purge" ? [...args, "--yes"] : args);
  const done = /"(?:redriven|purged)":1\b/u.test(out);
  if (done) {
    const history = kind === "purge" ? "purged" : "redriven";
    const record = [letter.key, group.group, letter.id, Date.now()].join(" ");
    const key = historyKey(group.stream, history);
    // Kept outside Redis too, with WAIT's verdict (localHistory.ts).
    if (on.local === undefined) await on.redis.rpush(key, record);
    else {
      const { at, confirmed } = await on.local.write(on.redis, "rpush", [key, record]);
      on.local.add({ kind: history, record, at, confirmed });
    }
  }
  return `${group.group} ${letter.id} (${letter.key}): exit ${code} ${out.slice(0, 300)}`;
}
