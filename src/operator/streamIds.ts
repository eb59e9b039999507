/** Stream ids as `<ms>-<seq>` compared exactly (both parts can exceed 2^53). */
export function parseStreamId(id: string): [ms: bigint, seq: bigint] {
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

/** Redis TIME in Unix ms: ages are measured on the server's clock, like ids. */
export async function redisNowMs(redis: {
  call(command: string, ...args: string[]): Promise<unknown>;
}): Promise<number> {
  const reply = (await redis.call("TIME")) as [string, string];
  return Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
}
