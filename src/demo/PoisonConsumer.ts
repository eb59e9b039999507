import type { Redis } from "ioredis";
import { Actor } from "./Actor.js";
import type { Printer } from "./printer.js";
import { DEMO_GROUP, DEMO_STREAM } from "./demoConfig.js";
import { amountProblem, orderName, readGroup, type StreamEntry } from "./streamEntries.js";

/**
 * Restart delays of the crash loop, then the last one repeats. The first restarts come quickly
 * (each re-read of the PEL is a delivery, so the count climbs); the long one leaves the entry
 * idle past minIdleMs, the janitor's chance to see the count and dead-letter it.
 */
const RESTART_DELAYS_MS = [400, 800, 5000] as const;

/**
 * consumer-3 takes the poison order and crash-loops on it: every restart re-reads its own pending
 * entries (XREADGROUP ... 0), fails on the same order and dies again without acknowledging. An
 * in-process retry counter would be reset by each crash; the delivery count Redis keeps is not,
 * and that is what the janitor's maxDeliveries acts on.
 */
export class PoisonConsumer extends Actor {
  constructor(redis: Redis, printer: Printer) {
    super("consumer-3", redis, printer);
  }

  /** The first life: takes exactly one new order, which the scene has made the poison one. */
  async takeOne(): Promise<void> {
    const [entry] = await this.read(">");
    if (entry !== undefined) await this.fail(entry, 0);
  }

  protected async run(): Promise<void> {
    for (let restart = 0; !this.stopping; restart += 1) {
      await this.pause(RESTART_DELAYS_MS[Math.min(restart, RESTART_DELAYS_MS.length - 1)] ?? 0);
      if (this.stopping) return;
      const [entry] = await this.read("0");
      if (entry === undefined) {
        this.say("restarted and found nothing pending: the janitor took the poison order away");
        return;
      }
      await this.fail(entry, restart + 1);
    }
  }

  private read(from: ">" | "0"): Promise<StreamEntry[]> {
    return readGroup(this.redis, {
      stream: DEMO_STREAM,
      group: DEMO_GROUP,
      consumer: this.name,
      count: 1,
      from,
    });
  }

  private async fail(entry: StreamEntry, restart: number): Promise<void> {
    const problem = amountProblem(entry) ?? "it failed";
    const nextDelay = RESTART_DELAYS_MS[Math.min(restart, RESTART_DELAYS_MS.length - 1)] ?? 0;
    const deliveries = await this.deliveryCount(entry.id);
    const times = deliveries === 1 ? "1 time" : `${deliveries} times`;
    this.say(
      `poison ${orderName(entry)} delivered ${times}: ${problem}; crashed without acking, restarts in ${(nextDelay / 1000).toFixed(1)} s`,
    );
  }

  /** The count Redis keeps for the entry (XPENDING), which survives the consumer's crashes. */
  private async deliveryCount(id: string): Promise<number> {
    const reply = await this.redis.call("XPENDING", DEMO_STREAM, DEMO_GROUP, id, id, 1);
    const row = Array.isArray(reply) ? (reply as unknown[])[0] : undefined;
    return Array.isArray(row) ? Number((row as unknown[])[3]) : 0;
  }
}
