import { parseTaskHash, type RedriveTask } from "../core/redriveTask.js";
import type { RedisClient } from "../redis/RedisClient.js";

/** The directory is read newest first, at most this many (finished tasks expire meanwhile). */
const MAX_TASKS_READ = 1000;

export interface RedriveTaskList {
  /** Newest first. */
  tasks: RedriveTask[];
  /** Directory members whose task hash is gone (expired), with their start time: to prune. */
  gone: { key: string; startedAt: number }[];
}

/**
 * The redrive tasks the directory lists (src/core/redriveTask.ts): one ZRANGE, then one HGETALL
 * per task, concurrent (ioredis pipelines them; on a Cluster each goes to its slot's node).
 * Read-only, for `dlq tasks`, the leader's runner and the console.
 */
export async function readRedriveTasks(
  redis: RedisClient,
  directoryKey: string,
): Promise<RedriveTaskList> {
  const flat = await redis.zrevrange(directoryKey, 0, MAX_TASKS_READ - 1, "WITHSCORES");
  const members: { key: string; startedAt: number }[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    members.push({ key: flat[i] ?? "", startedAt: Number(flat[i + 1]) });
  }
  const hashes = await Promise.all(members.map(({ key }) => redis.hgetall(key)));
  const list: RedriveTaskList = { tasks: [], gone: [] };
  hashes.forEach((hash, i) => {
    const task = parseTaskHash(hash);
    const member = members[i];
    if (task !== undefined) list.tasks.push(task);
    else if (member !== undefined) list.gone.push(member);
  });
  return list;
}

/** One task by id, from the directory; undefined when none has that id. */
export async function findRedriveTask(
  redis: RedisClient,
  directoryKey: string,
  id: string,
): Promise<RedriveTask | undefined> {
  const { tasks } = await readRedriveTasks(redis, directoryKey);
  return tasks.find((task) => task.id === id);
}
