import type { Redis } from "ioredis";
import { setTimeout as delay } from "node:timers/promises";
import type { AuditConsumer } from "./AuditConsumer.js";
import { crashAuditorMidBatch } from "./auditorCrash.js";
import { crashMidBatch } from "./crashingConsumer.js";
import { DEMO_MIN_IDLE_MS } from "./demoConfig.js";
import type { DeadLetterWatcher } from "./DeadLetterWatcher.js";
import type { GoodConsumer } from "./GoodConsumer.js";
import type { PoisonConsumer } from "./PoisonConsumer.js";
import type { Printer } from "./printer.js";
import type { Producer } from "./Producer.js";
import { trimOldestOrders } from "./retentionTrim.js";
import { orderName } from "./streamEntries.js";

export interface Cast {
  producer: Producer;
  goodConsumer: GoodConsumer;
  poisonConsumer: PoisonConsumer;
  deadLetters: DeadLetterWatcher;
  /** consumer-2's connection; it closes it when it "crashes". */
  crashingRedis: Redis;
  /** The audit group's consumer, and auditor-1's connection (closed when it "crashes"). */
  auditor: AuditConsumer;
  crashingAuditorRedis: Redis;
  /** For the retention job. */
  admin: Redis;
}

const BURST = 5;
/** The retention trim comes well inside minIdleMs, before the janitor looks at those entries. */
const TRIM_AFTER_MS = 700;
const GHOSTS = 2;

/**
 * Sets up the trouble, in an order that makes each actor get exactly what the story needs: the
 * burst goes to consumer-2 (it reads before anyone else), the poison order to consumer-3, and
 * only then does consumer-1 start taking everything new. In the audit group, auditor-1 reads the
 * burst too and dies half-way through it. The rest is up to the janitor.
 */
export async function playScene(cast: Cast, printer: Printer, signal: AbortSignal): Promise<void> {
  cast.deadLetters.start();
  for (let i = 0; i < BURST; i += 1) await cast.producer.addOrder();
  printer.line("producer", `added a burst of ${BURST} orders`);
  const batch = await crashMidBatch(cast.crashingRedis, printer);

  await cast.producer.addPoisonOrder();
  printer.line("producer", 'added an order whose amount is "twelve": a poison order');
  await cast.poisonConsumer.takeOne();
  cast.poisonConsumer.start();
  // Before the producer starts, so auditor-1's batch is exactly the burst.
  await crashAuditorMidBatch(cast.crashingAuditorRedis, printer);
  cast.auditor.start();

  cast.goodConsumer.start();
  cast.producer.start();

  await delay(TRIM_AFTER_MS, undefined, { signal });
  const keepFrom = batch[GHOSTS];
  if (keepFrom === undefined) return;
  await trimOldestOrders(cast.admin, printer, keepFrom.id, batch.slice(0, GHOSTS).map(orderName));
  printer.line(
    "demo",
    `now wait: once orders have been idle for ${DEMO_MIN_IDLE_MS / 1000} s, the janitor claims them`,
  );
}
