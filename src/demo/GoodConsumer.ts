import { Actor } from "./Actor.js";
import { DEMO_GROUP, DEMO_STREAM } from "./demoConfig.js";
import { amountProblem, orderName, readGroup, type StreamEntry } from "./streamEntries.js";

const SUMMARY_EVERY_MS = 5000;
const PROCESSING_MS = 30;

/**
 * consumer-1, the well-behaved one: blocks for new orders, processes them, acknowledges them.
 * It also receives the janitor's requeued copies (they are new entries of the same stream) and
 * says so, which is where a crashed consumer's orders visibly get a second chance.
 */
export class GoodConsumer extends Actor {
  private processed = 0;
  private copies = 0;

  protected async run(): Promise<void> {
    this.say("reads with XREADGROUP BLOCK and acknowledges every order it processes");
    let lastSummaryAt = performance.now();
    let lastSummaryCount = 0;
    while (!this.stopping) {
      // A short block, so a stop request is noticed within half a second.
      const entries = await readGroup(this.redis, {
        stream: DEMO_STREAM,
        group: DEMO_GROUP,
        consumer: this.name,
        count: 10,
        blockMs: 500,
        from: ">",
      });
      // Processing takes a moment; it also lets the janitor's own report of a sweep come first.
      if (entries.length > 0) await this.pause(PROCESSING_MS);
      const done = entries.filter((entry) => this.process(entry)).map((entry) => entry.id);
      if (done.length > 0) await this.redis.xack(DEMO_STREAM, DEMO_GROUP, ...done);
      if (performance.now() - lastSummaryAt >= SUMMARY_EVERY_MS) {
        lastSummaryAt = performance.now();
        if (this.processed !== lastSummaryCount) {
          lastSummaryCount = this.processed;
          this.say(
            `has processed and acked ${this.processed} orders so far (${this.copies} of them requeued copies)`,
          );
        }
      }
    }
  }

  /** True when the order was processed and may be acknowledged. */
  private process(entry: StreamEntry): boolean {
    const problem = amountProblem(entry);
    if (problem !== undefined) {
      // Even a good consumer cannot process poison: it leaves it unacked for the janitor.
      this.say(`cannot process ${orderName(entry)} (${problem}); leaves it unacked`);
      return false;
    }
    this.processed += 1;
    const originalId = entry.fields?.get("x-original-id");
    if (originalId !== undefined) {
      this.copies += 1;
      const earlier = Number(entry.fields?.get("x-delivery-count") ?? "0");
      this.say(
        `got the requeued copy of ${orderName(entry)} (first id ${originalId}, delivery ${earlier + 1}): processed and acked`,
      );
    }
    return true;
  }
}
