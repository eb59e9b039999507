import { Actor } from "./Actor.js";
import { DEMO_BILLING_LANE, DEMO_GROUP, DEMO_STREAM } from "./demoConfig.js";
import { amountProblem, orderName, readGroup, type StreamEntry } from "./streamEntries.js";

const SUMMARY_EVERY_MS = 5000;
const PROCESSING_MS = 30;

/**
 * consumer-1, the well-behaved one: blocks for new orders, processes them, acknowledges them.
 * It reads billing's retry lane in the same XREADGROUP, so it also receives the janitor's
 * requeued copies and says so, which is where a crashed consumer's orders visibly get a second
 * chance (and the audit group, which reads demo:orders too, never sees those copies).
 */
export class GoodConsumer extends Actor {
  private processed = 0;
  private copies = 0;

  protected async run(): Promise<void> {
    this.say(
      `reads ${DEMO_STREAM} and ${DEMO_BILLING_LANE} in one XREADGROUP BLOCK and acknowledges every order it processes`,
    );
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
        lane: DEMO_BILLING_LANE,
      });
      // Processing takes a moment; it also lets the janitor's own report of a sweep come first.
      if (entries.length > 0) await this.pause(PROCESSING_MS);
      const done = entries.filter((entry) => this.process(entry));
      for (const stream of [DEMO_STREAM, DEMO_BILLING_LANE]) {
        const ids = done.filter((entry) => entry.stream === stream).map((entry) => entry.id);
        if (ids.length > 0) await this.redis.xack(stream, DEMO_GROUP, ...ids);
      }
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
        `got the requeued copy of ${orderName(entry)} from ${entry.stream} (first id ${originalId}, delivery ${earlier + 1}): processed and acked`,
      );
    }
    return true;
  }
}
