import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { GROUP_PAGE_LIMITS, section, type Section } from "./readGroupDetail.js";
import { ByteBudget } from "../reads/ByteBudget.js";
import { findEntry, type FoundEntry } from "../reads/findEntry.js";

/** Where an id is for the group (src/reads/findEntry.ts), within the group page's byte budget. */
export function readFind(
  redis: RedisClient,
  group: ResolvedGroup,
  id: string,
): Promise<Section<FoundEntry>> {
  return section(() => findEntry(redis, group, id, new ByteBudget(GROUP_PAGE_LIMITS.bytes)));
}
