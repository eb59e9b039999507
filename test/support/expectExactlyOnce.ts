import type { Cluster, Redis } from "ioredis";
import { pendingEntries, streamEntries } from "./fabricatePel.js";

export interface ExactlyOnceTarget {
  stream: string;
  group: string;
  /** Where requeued copies go (the source by default). */
  requeueStream?: string;
  deadLetterStream: string;
  /** The ids of the entries that were stuck before the janitor ran. */
  originalIds: readonly string[];
}

export interface ExactlyOnceOutcome {
  stillPending: number;
  requeued: number;
  deadLettered: number;
}

/**
 * "Nothing lost, nothing duplicated": every original entry ends in exactly one place, either
 * still pending in the group, or acknowledged with exactly one requeued copy, or acknowledged
 * with exactly one dead letter. Throws an error listing every entry that broke the rule.
 */
export async function expectExactlyOnce(
  redis: Redis | Cluster,
  target: ExactlyOnceTarget,
): Promise<ExactlyOnceOutcome> {
  const requeueStream = target.requeueStream ?? target.stream;
  const pending = new Set(
    (await pendingEntries(redis, target.stream, target.group, 10_000_000)).map((e) => e.id),
  );
  const copies = new Map<string, number>();
  const deadLetters = new Map<string, number>();
  const tally = async (stream: string, into: Map<string, number>): Promise<void> => {
    for (const entry of await streamEntries(redis, stream)) {
      const original = entry.fields.get("x-original-id");
      if (original !== undefined) into.set(original, (into.get(original) ?? 0) + 1);
    }
  };
  await tally(requeueStream, copies);
  await tally(target.deadLetterStream, deadLetters);

  const outcome: ExactlyOnceOutcome = { stillPending: 0, requeued: 0, deadLettered: 0 };
  const problems: string[] = [];
  for (const id of target.originalIds) {
    const isPending = pending.has(id) ? 1 : 0;
    const copyCount = copies.get(id) ?? 0;
    const deadCount = deadLetters.get(id) ?? 0;
    if (isPending + copyCount + deadCount !== 1) {
      problems.push(`${id}: pending=${isPending} copies=${copyCount} deadLetters=${deadCount}`);
      continue;
    }
    if (isPending) outcome.stillPending += 1;
    else if (copyCount) outcome.requeued += 1;
    else outcome.deadLettered += 1;
  }
  if (problems.length > 0) {
    throw new Error(
      `${problems.length} of ${target.originalIds.length} entries were lost or duplicated:\n` +
        problems.slice(0, 20).join("\n"),
    );
  }
  return outcome;
}
