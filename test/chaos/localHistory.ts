import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Redis } from "ioredis";
import type { HistoryKind } from "./groups.js";

/**
 * What a party recorded on its own side of the wire (Jepsen keeps the history outside the system
 * under test): each record it also wrote to Redis, when Redis answered, and whether a replica
 * confirmed it (WAIT). The history in Redis lives in the asynchronously replicated primary and
 * loses what a failover drops; this one does not, so the checker can tell what Redis dropped from
 * what the janitor broke (failoverLoss.ts).
 */
export interface LocalRecord {
  kind: HistoryKind;
  /** The record exactly as written to the Redis history (produced: "key stream id"). */
  record: string;
  /** When Redis answered the write (host ms). */
  at: number;
  /** WAIT 1 said a replica holds it; false: it did not within its timeout; undefined: not asked. */
  confirmed: boolean | undefined;
}

/** The consumers' log file (jsPrelude.ts, pyPrelude.ts), and WAIT's timeout (0: no replica). */
export const LOCAL_LOG_ENV = "CHAOS_LOCAL_LOG";
export const WAIT_MS_ENV = "CHAOS_WAIT_MS";

/**
 * WAIT's timeout on Sentinel and Cluster (one replica per primary, or per master). Short: a
 * consumer waits it out after each acknowledgement while the replica resyncs, and an unconfirmed
 * record that survives is a fact anyway; the confirmation only decides what a failover may have
 * dropped.
 */
const WAIT_MS = 200;

/** What a write answered, when, and whether a replica confirmed it (undefined: not asked). */
export interface ConfirmedWrite {
  reply: unknown;
  at: number;
  confirmed: boolean | undefined;
}

/** Replies that send a Cluster write to another node (the client's own routing follows them). */
const REDIRECTED = /^(?:MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/u;

/** One line of a local log: kind, answered-at, confirmed (1, 0 or -), the record. */
export function localLine(record: LocalRecord): string {
  const flag = record.confirmed === undefined ? "-" : record.confirmed ? "1" : "0";
  return `${record.kind}\t${record.at}\t${flag}\t${record.record}\n`;
}

export function parseLocalLog(text: string): LocalRecord[] {
  const records: LocalRecord[] = [];
  for (const line of text.split("\n")) {
    const [kind, at, flag, record] = line.split("\t");
    if (kind === undefined || record === undefined) continue;
    const confirmed = flag === "-" ? undefined : flag === "1";
    records.push({ kind: kind as HistoryKind, at: Number(at), confirmed, record });
  }
  return records;
}

/** The harness's own records (producer, operator), and the consumers' log files at the end. */
export class LocalHistory {
  readonly records: LocalRecord[] = [];

  constructor(
    /** WAIT 1's timeout after each write; 0 where there is no replica to wait for. */
    readonly waitMs: number,
    /** Where the consumers' logs go, one file each. */
    readonly dir: string,
  ) {}

  /**
   * `command`, then WAIT 1 in the same pipeline: one connection, so WAIT answers for this write
   * (it waits for its connection's latest write). On Cluster ioredis sends a pipeline to the
   * master of its keys' slot, the keyless WAIT with it: the node that took the write. A write
   * redirected (MOVED, ASK, TRYAGAIN) is sent again through the client's own routing, to the node
   * that takes it now, and stays unconfirmed: the safe verdict (failoverLoss.ts).
   */
  async write(
    redis: Redis,
    command: string,
    args: readonly (string | Buffer | number)[],
  ): Promise<ConfirmedWrite> {
    if (this.waitMs <= 0) {
      return { reply: await redis.call(command, ...args), at: Date.now(), confirmed: undefined };
    }
    let at = 0;
    const answered = () => void (at = Date.now());
    const replies = await redis
      .pipeline()
      .call(command, [...args], answered)
      .call("WAIT", "1", String(this.waitMs))
      .exec();
    if (replies === null) throw new Error(`${command}: its pipeline was discarded`);
    const [[error, reply] = [null, undefined], [waitError, waited] = [null, 0]] = replies;
    if (error !== null) {
      if (!REDIRECTED.test(error.message)) throw error;
      return { reply: await redis.call(command, ...args), at: Date.now(), confirmed: false };
    }
    return { reply, at, confirmed: waitError === null && Number(waited) >= 1 };
  }

  /** A run's: in `outDir`/local, emptied of another run's; WAIT where there is a replica. */
  static async create(outDir: string, replicated: boolean): Promise<LocalHistory> {
    const dir = join(outDir, "local");
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return new LocalHistory(replicated ? WAIT_MS : 0, dir);
  }

  add(record: LocalRecord): void {
    this.records.push(record);
  }

  /** Every record: the harness's and each consumer's log file (consumers stopped first). */
  async all(): Promise<LocalRecord[]> {
    const all = [...this.records];
    const files = await readdir(this.dir).catch(() => [] as string[]);
    for (const file of files.filter((name) => name.endsWith(".log"))) {
      all.push(...parseLocalLog(await readFile(join(this.dir, file), "utf8")));
    }
    return all;
  }
}
