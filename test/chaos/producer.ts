import type { Redis } from "ioredis";
import { historyKey } from "./groups.js";
import type { ConfirmedWrite, LocalHistory } from "./localHistory.js";

/**
 * Produces with an idempotency key: the script writes the entry and the key's id in one step, and
 * a retry of the same key (its reply lost to a Redis kill) writes nothing twice.
 */
const PRODUCE_LUA = `local seen = redis.call('HGET', KEYS[2], ARGV[1])
if seen then return seen end
local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 2))
redis.call('HSET', KEYS[2], ARGV[1], KEYS[1] .. ' ' .. id)
return id`;

const POISON_RATE = 0.02;
const IN_FLIGHT = 8;
const MIN_BODY = 10;

export interface ProducerCounts {
  produced: number;
  poison: number;
  bytes: number;
  retries: number;
}

/** Bodies from 10 B to maxBody, log-uniform, random bytes; a few short binary fields. */
function entryFields(random: () => number, key: string, maxBody: number): (string | Buffer)[] {
  const size = Math.floor(MIN_BODY * Math.pow(maxBody / MIN_BODY, random()));
  const body = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1) body[i] = Math.floor(random() * 256);
  const fields: (string | Buffer)[] = ["k", key, "body", body];
  if (random() < 0.3) fields.push("bin", Buffer.from([0, 255, 13, 10, Math.floor(random() * 256)]));
  if (key.endsWith(":poison")) fields.push("poison", "1");
  return fields;
}

export class ChaosProducer {
  readonly counts: ProducerCounts = { produced: 0, poison: 0, bytes: 0, retries: 0 };
  private running = true;

  constructor(
    private readonly redis: Redis,
    private readonly random: () => number,
    private readonly maxBody: number,
    /** Where each answered write is also recorded, with its replica's confirmation. */
    private readonly local?: LocalHistory,
  ) {}

  /**
   * Writes one entry to a stream drawn from the seed every `everyMs`, until stop() and at least
   * `minEntries` in all, with up to IN_FLIGHT writes waiting for Redis: a slow fsync or a loaded
   * host slows the rate less (the data and the keys are drawn in the same order whatever the
   * replies' timing). A host too busy to write `minEntries` before stop() writes the rest after
   * it, so a short run exercises enough entries however starved the host (chaos.test.ts).
   */
  async run(streams: readonly string[], everyMs: number, minEntries = 0): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    for (let sequence = 0; this.running || sequence < minEntries; sequence += 1) {
      const stream = streams[Math.floor(this.random() * streams.length)] ?? streams[0];
      if (stream === undefined) return;
      const poison = this.random() < POISON_RATE;
      const key = `${stream}:${sequence}${poison ? ":poison" : ""}`;
      const fields = entryFields(this.random, key, this.maxBody);
      const write: Promise<void> = this.produce(stream, key, fields).then(() => {
        this.counts.produced += 1;
        if (poison) this.counts.poison += 1;
        this.counts.bytes += fields.reduce((sum, field) => sum + field.length, 0);
        inFlight.delete(write);
      });
      inFlight.add(write);
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    await Promise.all(inFlight);
  }

  stop(): void {
    this.running = false;
  }

  private async produce(stream: string, key: string, fields: (string | Buffer)[]): Promise<void> {
    for (;;) {
      try {
        const args = [PRODUCE_LUA, 2, stream, historyKey(stream, "produced"), key, ...fields];
        if (this.local === undefined) await this.redis.call("eval", ...args);
        else this.recordLocally(stream, key, await this.local.write(this.redis, "eval", args));
        return;
      } catch {
        // Redis restarting or the connection killed: the same key again, written at most once.
        this.counts.retries += 1;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /**
   * The script answers the new id, or "stream id" of the key's first write (a retry): that write
   * was an earlier attempt's, maybe on a connection since closed, which WAIT cannot answer for.
   */
  private recordLocally(stream: string, key: string, write: ConfirmedWrite): void {
    const reply = String(write.reply);
    const retried = reply.includes(" ");
    const where = retried ? reply : `${stream} ${reply}`;
    const confirmed = retried && write.confirmed === true ? false : write.confirmed;
    this.local?.add({ kind: "produced", record: `${key} ${where}`, at: write.at, confirmed });
  }
}
