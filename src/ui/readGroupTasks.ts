import { redriveTaskDirectoryKey, type RedriveTask } from "../core/redriveTask.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { findRedriveTask, readRedriveTasks } from "../reads/readRedriveTasks.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { section, type Section } from "./readGroupDetail.js";

/** Tasks of a group its page lists, newest first (`dlq tasks` lists them all). */
const GROUP_TASKS_SHOWN = 20;

/**
 * The group's redrive tasks, from the directory beside the lease key (src/reads/
 * readRedriveTasks.ts: one ZREVRANGE, then one HGETALL per listed task, at most 1,000).
 */
export function readGroupTasks(
  redis: RedisClient,
  leaseKey: string,
  group: Pick<ResolvedGroup, "stream" | "group">,
): Promise<Section<RedriveTask[]>> {
  return section(async () => {
    const { tasks } = await readRedriveTasks(redis, redriveTaskDirectoryKey(leaseKey));
    const mine = tasks.filter((task) => task.stream === group.stream && task.group === group.group);
    return mine.slice(0, GROUP_TASKS_SHOWN);
  });
}

/** One task by id; a value of undefined when none has that id (finished ones expire). */
export function readTask(
  redis: RedisClient,
  leaseKey: string,
  id: string,
): Promise<Section<RedriveTask | undefined>> {
  return section(() => findRedriveTask(redis, redriveTaskDirectoryKey(leaseKey), id));
}
