import type { Redis } from "ioredis";
import { Actor } from "./Actor.js";
import { DEMO_DEAD_LETTER_STREAM } from "./demoConfig.js";
import type { Printer } from "./printer.js";
import { orderName, parseReadReply } from "./streamEntries.js";

/**
 * Tails the dead-letter stream (plain XREAD, no group) and says what arrived and why, from the
 * metadata fields the janitor writes first: the operator's view of a dead letter.
 */
export class DeadLetterWatcher extends Actor {
  constructor(redis: Redis, printer: Printer) {
    super("dead-letters", redis, printer);
  }

  protected async run(): Promise<void> {
    // The scene starts with the stream deleted, so everything in it is news.
    let lastId = "0-0";
    while (!this.stopping) {
      const reply = await this.redis.call(
        "XREAD",
        "COUNT",
        10,
        "BLOCK",
        500,
        "STREAMS",
        DEMO_DEAD_LETTER_STREAM,
        lastId,
      );
      for (const entry of parseReadReply(reply)) {
        lastId = entry.id;
        const field = (name: string): string => entry.fields?.get(name) ?? "?";
        this.say(
          `${DEMO_DEAD_LETTER_STREAM} received ${orderName(entry)}: reason ${field("x-dead-letter-reason")}, ` +
            `delivered ${field("x-delivery-count")} times, last held by ${field("x-last-consumer")} ` +
            `(first id ${field("x-original-id")})`,
        );
      }
    }
  }
}
