import { Cluster, type Redis } from "../redis/ioredis.js";
import type { RedisClient } from "../redis/RedisClient.js";

/**
 * The servers whose keyspaces together hold every key: the server itself, or every master of a
 * Cluster (SCAN only walks the node it is sent to). Read at each scan, so a resharded or
 * failed-over Cluster is followed. Replicas are skipped: they hold the same keys as their master.
 */
export type ScanNodes = () => readonly Redis[] | Promise<readonly Redis[]>;

export function scanNodesOf(redis: RedisClient): ScanNodes {
  if (redis instanceof Cluster) return () => clusterMasters(redis);
  return () => [redis];
}

/**
 * A Cluster client knows its masters only once it has the slot map: before its first command
 * (lazyConnect) `nodes("master")` is empty, and a scan of no node would find no group at all.
 * So the map is fetched first, and a Cluster that cannot give one fails the scan (the groups
 * found before stay) instead of answering "nothing".
 */
async function clusterMasters(cluster: Cluster): Promise<readonly Redis[]> {
  if (cluster.status === "wait") await cluster.connect();
  else if (cluster.status !== "ready") await cluster.call("PING");
  const masters = cluster.nodes("master");
  if (masters.length === 0) throw new Error("the cluster reported no master");
  return masters;
}
