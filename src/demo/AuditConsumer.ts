import { Actor } from "./Actor.js";
import { DEMO_AUDIT_GROUP, DEMO_AUDIT_LANE, DEMO_STREAM } from "./demoConfig.js";
import { orderName, readGroup } from "./streamEntries.js";

/**
 * auditor-2, the audit group's replacement consumer: records every order (poison included: it
 * does not parse amounts) from demo:orders and the audit lane, read in one XREADGROUP with `>`
 * for both. It never re-reads its predecessor's pending entries; the janitor's copies in the
 * lane are how those come back, and it says so.
 */
export class AuditConsumer extends Actor {
  protected async run(): Promise<void> {
    this.say(
      `started in place of auditor-1; reads ${DEMO_STREAM} and ${DEMO_AUDIT_LANE} with XREADGROUP ... STREAMS ${DEMO_STREAM} ${DEMO_AUDIT_LANE} > >`,
    );
    while (!this.stopping) {
      const entries = await readGroup(this.redis, {
        stream: DEMO_STREAM,
        group: DEMO_AUDIT_GROUP,
        consumer: this.name,
        count: 10,
        blockMs: 500,
        from: ">",
        lane: DEMO_AUDIT_LANE,
      });
      for (const stream of [DEMO_STREAM, DEMO_AUDIT_LANE]) {
        const ids = entries.filter((entry) => entry.stream === stream).map((entry) => entry.id);
        if (ids.length > 0) await this.redis.xack(stream, DEMO_AUDIT_GROUP, ...ids);
      }
      for (const entry of entries) {
        if (entry.stream !== DEMO_AUDIT_LANE) continue;
        const originalId = entry.fields?.get("x-original-id") ?? "?";
        const earlier = Number(entry.fields?.get("x-delivery-count") ?? "0");
        this.say(
          `got ${orderName(entry)} back through the retry lane ${DEMO_AUDIT_LANE} ` +
            `(first id ${originalId}, delivery ${earlier + 1}): recorded and acked; the copy is in ` +
            `audit's lane only, so billing's consumers never see it`,
        );
      }
    }
  }
}
