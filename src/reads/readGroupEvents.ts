import type { ResolvedGroup } from "../core/resolveGroup.js";
import { parseEventEntry, type AdvisoryEventRecord } from "../events/advisoryEventRecord.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { asArray } from "../redis/replies.js";

/**
 * The group's newest advisory events: one XREVRANGE of the events stream looking at the newest
 * `scanned` entries, filtered to the group, at most `shown` of them. None without a stream.
 */
export async function readGroupEvents(
  redis: RedisClient,
  eventsStream: string,
  group: ResolvedGroup,
  limits: { scanned: number; shown: number },
): Promise<AdvisoryEventRecord[]> {
  if (eventsStream === "") return [];
  const reply = asArray(
    await redis.call("XREVRANGE", eventsStream, "+", "-", "COUNT", limits.scanned),
    "XREVRANGE",
  );
  const events: AdvisoryEventRecord[] = [];
  for (const entry of reply) {
    const [id, fields] = asArray(entry, "XREVRANGE entry");
    const event = parseEventEntry(String(id), asArray(fields, "XREVRANGE fields").map(String));
    if (event.stream === group.stream && event.group === group.group) events.push(event);
    if (events.length >= limits.shown) break;
  }
  return events;
}
