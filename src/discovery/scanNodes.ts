import { Cluster, type Redis } from "ioredis";
import type { RedisClient } from "../redis/scriptedRedis.js";

/**
 * The servers whose keyspaces together hold every key: the server itself, or every master of a
 * Cluster (SCAN only walks the node it is sent to). Read at each scan, so a resharded or
 * failed-over Cluster is followed. Replicas are skipped: they hold the same keys as their master.
 */
export type ScanNodes = () => readonly Redis[];

export function scanNodesOf(redis: RedisClient): ScanNodes {
  if (redis instanceof Cluster) return () => redis.nodes("master");
  return () => [redis];
}
