import type { Logger } from "pino";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ReadableSample, StatusSample } from "./StatusSample.js";

/** What the stream said about one read position: whether any entry follows it. */
export interface LagCheck {
  readonly position: string;
  readonly follows: boolean;
}

/**
 * A sample that would count towards STALL: lag > 0 at a read position that has not moved since
 * the previous sample. Only such a lag is worth checking against the stream; a moving position
 * or a lag of 0 costs nothing.
 */
function isStallCandidate(previous: StatusSample | undefined, latest: ReadableSample): boolean {
  return (
    previous?.readable === true &&
    (latest.lag ?? 0) > 0 &&
    (previous.lag ?? previous.unbackedLag ?? 0) > 0 &&
    previous.lastDeliveredId === latest.lastDeliveredId &&
    previous.entriesRead === latest.entriesRead
  );
}

/**
 * Whether an entry follows `position` in the stream. It copies that one entry (Redis cannot
 * return an id without its body): the price of telling a stale counter from a stalled group,
 * paid once per stall candidate and read position, since the caller remembers the answer while
 * the position holds.
 */
async function entryFollows(
  redis: RedisClient,
  stream: string,
  position: string,
): Promise<boolean> {
  const reply = await redis.call("XRANGE", stream, `(${position}`, "+", "COUNT", 1);
  return Array.isArray(reply) && reply.length > 0;
}

/**
 * A stall candidate's lag checked against the stream, since the server's counters can be stale.
 * Before Redis 7.4 (and in Valkey 7.2, forked before the fix), a consumer's XREADGROUP reaches
 * the AOF and the replicas as XCLAIM ... LASTID, which moves the last-delivered id but not
 * entries-read (redis/redis#12898): after a restart from the AOF, or on a promoted replica,
 * XINFO GROUPS keeps reporting a lag of entries the group has read. Checked on every server,
 * as the status asks what the server reports rather than its version:
 * with no entry after the read position the lag is not backed (`unbackedLag`, lag null) and the
 * group is not stalled. `known` is the previous answer, reused while the position holds; a
 * failed read leaves the sample as Redis reported it.
 */
export async function checkLagBacked(
  redis: RedisClient,
  stream: string,
  input: {
    previous: StatusSample | undefined;
    sample: ReadableSample;
    known: LagCheck | undefined;
    log: Logger;
  },
): Promise<{ sample: ReadableSample; check: LagCheck | undefined }> {
  const { previous, sample, known, log } = input;
  if (!isStallCandidate(previous, sample)) {
    return { sample, check: known };
  }
  const position = sample.lastDeliveredId;
  let check = known;
  if (check?.position !== position) {
    try {
      check = { position, follows: await entryFollows(redis, stream, position) };
    } catch (error) {
      log.debug({ err: error, stream }, "lag not checked against the stream");
      return { sample, check: known };
    }
  }
  if (check.follows) return { sample, check };
  const unbacked = sample.lag === null ? {} : { unbackedLag: sample.lag };
  return { sample: { ...sample, lag: null, ...unbacked }, check };
}
