import type { Redis } from "ioredis";
import { DEMO_STREAM } from "./demoConfig.js";
import type { Printer } from "./printer.js";

/**
 * A retention job trims the oldest orders. XTRIM removes bodies without touching the pending
 * entries lists, so entries that were delivered but never acknowledged lose their data and stay
 * pending: ghosts. The janitor cannot requeue them (there is nothing to copy); it reports them.
 */
export async function trimOldestOrders(
  redis: Redis,
  printer: Printer,
  keepFromId: string,
  pendingNames: readonly string[],
): Promise<void> {
  const removed = Number(await redis.call("XTRIM", DEMO_STREAM, "MINID", keepFromId));
  printer.line(
    "retention",
    `XTRIM ${DEMO_STREAM} MINID ${keepFromId} removed ${removed} old orders; ` +
      `${pendingNames.join(" and ")} were still pending (unacknowledged), so they are ghosts now`,
  );
}
