import { redriveTaskDirectoryKey, type RedriveTask } from "../core/redriveTask.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { findRedriveTask, readRedriveTasks } from "../reads/readRedriveTasks.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { GROUP_PAGE_LIMITS, type Section } from "./readGroupDetail.js";
import { ByteBudget } from "../reads/ByteBudget.js";
import { findEntry, type FoundEntry } from "../reads/findEntry.js";

/** Tasks of a group its page lists, newest first (`dlq tasks` lists them all). */
const GROUP_TASKS_SHOWN = 20;

function failure(error: unknown): { ok: false; error: string } {
  return { ok: false, error: error instanceof Error ? error.message : String(error) };
}

/**
 * The group's redrive tasks, from the directory beside the lease key (src/reads/
 * readRedriveTasks.ts: one ZREVRANGE, then one HGETALL per listed task, at most 1,000).
 */
export async function readGroupTasks(
  redis: RedisClient,
  leaseKey: string,
  group: Pick<ResolvedGroup, "stream" | "group">,
): Promise<Section<RedriveTask[]>> {
  try {
    const { tasks } = await readRedriveTasks(redis, redriveTaskDirectoryKey(leaseKey));
    const mine = tasks.filter((task) => task.stream === group.stream && task.group === group.group);
    return { ok: true, value: mine.slice(0, GROUP_TASKS_SHOWN) };
  } catch (error) {
    return failure(error);
  }
}

/** One task by id; a value of undefined when none has that id (finished ones expire). */
export async function readTask(
  redis: RedisClient,
  leaseKey: string,
  id: string,
): Promise<Section<RedriveTask | undefined>> {
  try {
    return { ok: true, value: await findRedriveTask(redis, redriveTaskDirectoryKey(leaseKey), id) };
  } catch (error) {
    return failure(error);
  }
}

/** Where an id is for the group (src/reads/findEntry.ts), within the group page's byte budget. */
export async function readFind(
  redis: RedisClient,
  group: ResolvedGroup,
  id: string,
): Promise<Section<FoundEntry>> {
  try {
    return {
      ok: true,
      value: await findEntry(redis, group, id, new ByteBudget(GROUP_PAGE_LIMITS.bytes)),
    };
  } catch (error) {
    return failure(error);
  }
}
