import type { Redis } from "ioredis";
import { DEMO_AUDIT_GROUP, DEMO_AUDIT_LANE, DEMO_STREAM } from "./demoConfig.js";
import type { Printer } from "./printer.js";
import { orderName, readGroup } from "./streamEntries.js";

const NAME = "auditor-1";
const BATCH = 5;
/** Entries it records (and acknowledges) before it dies. */
const RECORDED = 3;

/**
 * auditor-1, the audit group's first consumer, reads demo:orders and its group's retry lane in
 * one XREADGROUP, records orders one by one (acknowledging each) and dies part-way through the
 * batch: the rest stay pending in the audit group only. The janitor requeues them into the
 * audit lane, not into demo:orders, so billing never receives a second copy.
 */
export async function crashAuditorMidBatch(redis: Redis, printer: Printer): Promise<void> {
  const entries = await readGroup(redis, {
    stream: DEMO_STREAM,
    group: DEMO_AUDIT_GROUP,
    consumer: NAME,
    count: BATCH,
    from: ">",
    lane: DEMO_AUDIT_LANE,
  });
  printer.line(
    NAME,
    `read a batch of ${entries.length} orders from ${DEMO_STREAM} and ${DEMO_AUDIT_LANE} in one XREADGROUP`,
  );
  const recorded = entries.slice(0, RECORDED);
  for (const entry of recorded) await redis.xack(entry.stream, DEMO_AUDIT_GROUP, entry.id);
  await redis.quit();
  const held = entries.slice(RECORDED).map(orderName);
  printer.line(
    NAME,
    `crashed after recording ${recorded.length} of ${entries.length} orders: ` +
      `${held.join(" and ")} stay pending in group ${DEMO_AUDIT_GROUP} only`,
  );
}
