import type { Redis } from "ioredis";
import { DEMO_GROUP, DEMO_STREAM } from "./demoConfig.js";
import type { Printer } from "./printer.js";
import { orderName, readGroup, type StreamEntry } from "./streamEntries.js";

const NAME = "consumer-2";
const BATCH = 5;

/**
 * consumer-2 reads a batch and dies before acknowledging any of it: the orders stay in the
 * group's pending entries list under its name, and nobody else will ever be given them, until
 * the janitor claims them once they have been idle for minIdleMs.
 */
export async function crashMidBatch(redis: Redis, printer: Printer): Promise<StreamEntry[]> {
  const entries = await readGroup(redis, {
    stream: DEMO_STREAM,
    group: DEMO_GROUP,
    consumer: NAME,
    count: BATCH,
    from: ">",
  });
  const names = entries.map(orderName).join(", ");
  printer.line(NAME, `read a batch of ${entries.length} orders (${names})`);
  // The "crash": the process is gone, its connection with it; the entries stay pending.
  await redis.quit();
  printer.line(
    NAME,
    `crashed holding ${entries.length} orders, none acknowledged: they sit in its pending list`,
  );
  return entries;
}
