import type { Redis } from "ioredis";

/**
 * What to do with a key MIGRATE refused with BUSYKEY (the target holds a copy already): move the
 * source's copy over the target's only when they are the same or the source's is the newer one,
 * never over newer data; "keep" leaves both and the caller reports the slot split.
 */
export type BusyVerdict = { replace: boolean; why: string };

/** A command on the importing target: ASKING first, or it answers MOVED. */
async function asking(target: Redis, command: string, ...args: string[]): Promise<unknown> {
  // callBuffer: DUMP's reply is bytes, and the other replies' fields are compared as bytes too.
  const replies = await target
    .pipeline()
    .call("ASKING")
    .callBuffer(command, ...args)
    .exec();
  const [error, reply] = replies?.[1] ?? [null, null];
  if (error !== null) throw error;
  return reply;
}

/** XINFO STREAM's flat reply as a map of its scalar fields. */
function fields(reply: unknown): Map<string, string> {
  // Buffers or strings, as the client was asked: only the scalar fields are read.
  const flat = Array.isArray(reply) ? (reply as unknown[]) : [];
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(String(flat[i]), String(flat[i + 1]));
  return map;
}

const idParts = (id = "0-0") => id.split("-").map((part) => BigInt(part));

/** Whether stream id `a` is at or after `b`. */
function atOrAfter(a: string | undefined, b: string | undefined): boolean {
  const [am = 0n, as = 0n] = idParts(a);
  const [bm = 0n, bs = 0n] = idParts(b);
  return am > bm || (am === bm && as >= bs);
}

/** Streams: the source's is newer when it has every id the target's had and more added. */
async function compareStreams(source: Redis, target: Redis, key: string): Promise<BusyVerdict> {
  const mine = fields(await source.call("XINFO", "STREAM", key));
  const theirs = fields(await asking(target, "XINFO", "STREAM", key));
  const describe = (info: Map<string, string>) =>
    `length ${info.get("length")}, last id ${info.get("last-generated-id")}, added ${info.get("entries-added")}`;
  const what = `source's (${describe(mine)}) vs target's (${describe(theirs)})`;
  const newer =
    atOrAfter(mine.get("last-generated-id"), theirs.get("last-generated-id")) &&
    Number(mine.get("entries-added")) > Number(theirs.get("entries-added"));
  return newer
    ? { replace: true, why: `source's copy newer: ${what}` }
    : { replace: false, why: `copies differ, neither newer: ${what}` };
}

/** Hashes (the harness's registries): the source's is newer when it holds all the target's. */
async function compareHashes(source: Redis, target: Redis, key: string): Promise<BusyVerdict> {
  const mine = (await source.call("HGETALL", key)) as string[];
  const theirs = ((await asking(target, "HGETALL", key)) as Buffer[]).map(String);
  const own = new Map<string, string>();
  for (let i = 0; i + 1 < mine.length; i += 2) own.set(mine[i] ?? "", mine[i + 1] ?? "");
  let contained = true;
  for (let i = 0; i + 1 < theirs.length; i += 2) {
    if (own.get(theirs[i] ?? "") !== theirs[i + 1]) contained = false;
  }
  const what = `source's ${own.size} fields vs target's ${theirs.length / 2}`;
  return contained
    ? { replace: true, why: `source's copy holds the target's: ${what}` }
    : { replace: false, why: `copies differ: ${what}` };
}

/** Compares the two copies of `key` (source: the slot's owner; target: importing it). */
export async function compareCopies(
  source: Redis,
  target: Redis,
  key: string,
): Promise<BusyVerdict> {
  const mine = await source.dumpBuffer(key);
  const theirs = (await asking(target, "DUMP", key)) as Buffer | null;
  if (mine === null) return { replace: false, why: "gone from the source" };
  if (theirs === null) return { replace: true, why: "gone from the target" };
  // DUMP is the value's serialisation: the same bytes are the same value.
  if (theirs.equals(mine)) return { replace: true, why: "the same copy on both" };
  const type = await source.type(key);
  if (type === "stream") return compareStreams(source, target, key);
  if (type === "hash") return compareHashes(source, target, key);
  return { replace: false, why: `${type} copies differ` };
}
