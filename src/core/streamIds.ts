/** The largest part of a stream id (both the ms and the seq part): 2^64 - 1. */
export const MAX_ID_PART = "18446744073709551615";

/** Stream ids as `<ms>-<seq>` compared exactly (both parts can exceed 2^53). */
function parseStreamId(id: string): [ms: bigint, seq: bigint] {
  const match = /^(\d+)-(\d+)$/u.exec(id);
  if (match === null) throw new Error(`not a stream id: ${id}`);
  return [BigInt(match[1] ?? "0"), BigInt(match[2] ?? "0")];
}

export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = parseStreamId(a);
  const [bMs, bSeq] = parseStreamId(b);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}

/** The millisecond part of an id: when the entry was added (on the clock of whoever added it). */
export function streamIdMs(id: string): number {
  return Number(parseStreamId(id)[0]);
}
