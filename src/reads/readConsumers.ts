import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { asArray, kvList } from "../redis/replies.js";

export interface ConsumerRow {
  name: string;
  pending: number;
  /** Since the consumer's last read attempt (XINFO CONSUMERS idle). */
  idleMs: number;
  /** Since its last successful read (7.2+); undefined on servers without it. */
  inactiveMs: number | undefined;
}

function parseConsumers(reply: unknown): ConsumerRow[] {
  return asArray(reply, "XINFO CONSUMERS").map((row) => {
    const fields = kvList(row, "XINFO CONSUMERS entry");
    const inactive = fields.get("inactive");
    return {
      name: String(fields.get("name")),
      pending: Number(fields.get("pending")),
      idleMs: Number(fields.get("idle")),
      inactiveMs: inactive === undefined ? undefined : Number(inactive),
    };
  });
}

/**
 * The group's consumers: one XINFO CONSUMERS. It has no COUNT: its size is the group's
 * consumers, which the scrape's reads already assume to be modest.
 */
export async function readConsumers(
  redis: RedisClient,
  group: ResolvedGroup,
): Promise<ConsumerRow[]> {
  return parseConsumers(await redis.call("XINFO", "CONSUMERS", group.stream, group.group));
}
