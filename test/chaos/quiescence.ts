import type { Redis } from "ioredis";
import {
  CHAOS_GROUPS,
  DEAD_LETTER_STREAMS,
  historyKey,
  READ_PAIRS,
  SOURCE_STREAMS,
} from "./groups.js";
import type { Violation } from "./checker.js";

async function pendingOf(redis: Redis, stream: string, group: string): Promise<number> {
  if ((await redis.exists(stream)) === 0) return 0;
  try {
    const [count] = (await redis.xpending(stream, group)) as [number];
    return count;
  } catch {
    return 0; // no such group (a lane its loop has not created): nothing pending there
  }
}

/** Entries pending in every chaos group's source and lane, by "stream/group". */
async function pendingByStream(redis: Redis): Promise<Record<string, number>> {
  const pending: Record<string, number> = {};
  for (const { stream, group } of READ_PAIRS) {
    pending[`${stream}/${group}`] = await pendingOf(redis, stream, group);
  }
  return pending;
}

/** Each produced entry once per group reading its stream. */
async function toProcess(redis: Redis): Promise<number> {
  let units = 0;
  for (const stream of SOURCE_STREAMS) {
    const groups = CHAOS_GROUPS.filter((group) => group.stream === stream).length;
    units += groups * (await redis.hlen(historyKey(stream, "produced")));
  }
  return units;
}

/** The length of one kind of list history, over every source stream. */
async function historyLength(redis: Redis, kind: "acks" | "purged"): Promise<number> {
  let length = 0;
  for (const stream of SOURCE_STREAMS) length += await redis.llen(historyKey(stream, kind));
  return length;
}

async function settled(redis: Redis): Promise<boolean> {
  const pending = Object.values(await pendingByStream(redis)).reduce((a, b) => a + b, 0);
  let deadLetters = 0;
  for (const stream of DEAD_LETTER_STREAMS) deadLetters += await redis.xlen(stream);
  const purged = await historyLength(redis, "purged");
  const done = (await historyLength(redis, "acks")) + deadLetters + purged;
  return pending === 0 && done >= (await toProcess(redis));
}

/** Polls `check` every 250 ms until true or `timeoutMs` (or `expired()`); true when it held. */
export async function pollUntil(
  check: () => Promise<boolean>,
  timeoutMs: number,
  expired: () => boolean = () => false,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > until || expired()) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Ends every consumer's blocked `XREADGROUP ... BLOCK 5000` now, as its timeout would (CLIENT
 * UNBLOCK without ERROR: an empty reply). The README loops read their own PEL only between
 * blocking reads, and an entry the janitor hands over (XCLAIM) wakes no reader, so in the quiet
 * period each hand-off would wait out a 5 s block. Only the time passes sooner: the loop does what
 * it does when the block times out.
 */
async function wakeBlockedReaders(node: Redis): Promise<void> {
  const list = String(await node.call("CLIENT", "LIST", "TYPE", "normal"));
  for (const line of list.split("\n")) {
    const fields = new Map(line.split(" ").map((pair) => pair.split("=", 2) as [string, string]));
    if (fields.get("cmd") !== "xreadgroup" || !(fields.get("flags") ?? "").includes("b")) continue;
    await node.call("CLIENT", "UNBLOCK", fields.get("id") ?? "0");
  }
}

/**
 * The quiet period: waits until nothing is pending and every entry is acked or dead-lettered.
 * `nodes`: a plain client of each data node, where consumers block (one but on Cluster).
 */
export async function awaitQuiescence(
  redis: Redis,
  nodes: () => readonly Redis[],
  timeoutMs: number,
): Promise<Violation[]> {
  const started = Date.now();
  const quiet = async (): Promise<boolean> => {
    if (await settled(redis)) return true;
    for (const node of nodes()) await wakeBlockedReaders(node).catch(() => undefined);
    return false;
  };
  if (await pollUntil(quiet, timeoutMs)) return [];
  const pending = await pendingByStream(redis);
  return [
    {
      invariant: "pending-at-quiescence",
      detail: `after ${Date.now() - started} ms of quiet: pending ${JSON.stringify(pending)}`,
    },
  ];
}

/**
 * Every lane empty once everything is acknowledged: the leader trims each lane after every sweep
 * pass, so a lane that keeps copies its group acknowledged grows without bound.
 */
export async function lanesTrimmed(redis: Redis, timeoutMs: number): Promise<Violation[]> {
  const lengths: Record<string, number> = {};
  const empty = async (): Promise<boolean> => {
    for (const { lane } of CHAOS_GROUPS) {
      if (lane !== undefined) lengths[lane] = await redis.xlen(lane);
    }
    return Object.values(lengths).every((length) => length === 0);
  };
  if (await pollUntil(empty, timeoutMs)) return [];
  return [
    {
      invariant: "lane-not-trimmed",
      detail: `nothing pending, yet after ${timeoutMs} ms the lanes hold ${JSON.stringify(lengths)}`,
    },
  ];
}
