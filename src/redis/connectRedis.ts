import type { ConnectionLogger } from "../logging/silentLogger.js";
import type { RedisConfig } from "../core/configTypes.js";
import type { ConnectionProblems } from "./ConnectionProblems.js";
import type { RedisEndpointSettings } from "./connectionOptions.js";
import { createClusterClient } from "./createClusterClient.js";
import { createRedisClient } from "./createRedisClient.js";
import type { RedisClient } from "./RedisClient.js";

export interface ConnectionRole {
  /** Shown in CLIENT LIST (on every node of a cluster). */
  connectionName: string;
  commandTimeoutMs: number;
  logger: ConnectionLogger;
  /** No resend across a reconnect (the lease). */
  failFast?: boolean;
  /** Shared by a process' connections: their trouble is logged once per change, not each. */
  problems?: ConnectionProblems;
}

/**
 * Every connection of the product is made here, by topology: a Redis Cluster client for
 * `redis.mode: cluster` (seeded by `redis.url` and `redis.nodes`), one connection otherwise
 * (standalone or through Sentinel). Callers get a client with the same command interface either
 * way; what differs (one hash slot per script, pipelines and SCANs per node, the fence per slot)
 * is decided by isCluster().
 */
export function connectRedis(settings: RedisEndpointSettings, role: ConnectionRole): RedisClient {
  if (settings.mode === "cluster") return createClusterClient({ ...settings, ...role });
  return createRedisClient({ ...settings, ...role });
}

/** True for `redis.mode: cluster`. */
export function isCluster(settings: Pick<RedisConfig, "mode"> | { mode?: string }): boolean {
  return settings.mode === "cluster";
}
