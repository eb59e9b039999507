import type { Logger } from "pino";
import type { JanitorConfig } from "../config/types.js";
import { createClusterClient } from "./createClusterClient.js";
import { createRedisClient } from "./createRedisClient.js";
import type { RedisClient } from "./scriptedRedis.js";

export interface ConnectionRole {
  /** Shown in CLIENT LIST (on every node of a cluster). */
  connectionName: string;
  commandTimeoutMs: number;
  logger: Logger;
  /** No resend across a reconnect (the lease). */
  failFast?: boolean;
}

/**
 * Every connection of the product is made here, by topology: a Redis Cluster client for
 * `redis.mode: cluster` (seeded by `redis.url` and `redis.nodes`), one connection otherwise.
 * Callers get a client with the same command interface either way; what differs (one hash slot
 * per script, pipelines per node, the fence per slot) is decided by isCluster().
 */
export function connectRedis(settings: JanitorConfig["redis"], role: ConnectionRole): RedisClient {
  if (settings.mode === "cluster") {
    return createClusterClient({ ...settings, nodes: settings.nodes ?? [], ...role });
  }
  return createRedisClient({ ...settings, ...role });
}

/** True for a Redis Cluster client. */
export function isCluster(settings: JanitorConfig["redis"]): boolean {
  return settings.mode === "cluster";
}
