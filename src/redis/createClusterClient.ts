import type { ConnectionOptions } from "node:tls";
import { Cluster, type ClusterNode } from "ioredis";
import type { Logger } from "pino";

export interface ClusterClientOptions {
  /** One seed node, `redis://host:port` or `rediss://` (credentials in it are used). */
  url: string;
  /** More seed nodes, "host:port": any one that answers gives the whole slot map. */
  nodes: readonly string[];
  /** Wins over a username/password inside the URL when non-empty. */
  username?: string;
  password: string;
  /** TLS settings for every node (rediss:// without them uses the system's CAs). */
  tls?: ConnectionOptions;
  /** Shown in CLIENT LIST on every node. */
  connectionName: string;
  /** Bounds every command on every node (see createRedisClient). */
  commandTimeoutMs: number;
  logger: Logger;
  /** As in createRedisClient: no resend across a reconnect (the lease). */
  failFast?: boolean;
}

/** Delays between retries of a command the cluster asked us to retry (none of them ran). */
const RETRY_DELAY_ON_TRY_AGAIN_MS = 100;
const RETRY_DELAY_ON_CLUSTER_DOWN_MS = 200;
const RETRY_DELAY_ON_FAILOVER_MS = 200;
/** MOVED/ASK/TRYAGAIN/CLUSTERDOWN retries per command: about 2-3 s of a migration or failover. */
const MAX_REDIRECTIONS = 16;

function parseNode(address: string): ClusterNode {
  const colon = address.lastIndexOf(":");
  if (colon === -1) return { host: address, port: 6379 };
  return {
    host: address.slice(0, colon).replace(/^\[|\]$/gu, ""),
    port: Number(address.slice(colon + 1)),
  };
}

/**
 * A Redis Cluster client with the same options and failure behaviour as createRedisClient.
 * Redirections are the cluster telling us a command did not run where we sent it (MOVED and ASK
 * after a slot migration, TRYAGAIN while a multi-key command's keys are split mid-migration,
 * CLUSTERDOWN during a failover): ioredis retries those, which cannot run anything twice. A
 * command whose connection closed may or may not have run: it is retried only when the caller
 * can afford that (not failFast), which is safe for our scripts since each is idempotent.
 */
export function createClusterClient(options: ClusterClientOptions): Cluster {
  const seed = new URL(options.url);
  const tlsWanted = seed.protocol === "rediss:" || options.tls !== undefined;
  const username =
    options.username !== undefined && options.username !== ""
      ? options.username
      : decodeURIComponent(seed.username);
  const password = options.password !== "" ? options.password : decodeURIComponent(seed.password);
  const failFast = options.failFast === true;
  const client = new Cluster(
    [
      { host: seed.hostname.replace(/^\[|\]$/gu, ""), port: Number(seed.port || 6379) },
      ...options.nodes.map(parseNode),
    ],
    {
      scaleReads: "master",
      lazyConnect: true,
      enableOfflineQueue: true,
      maxRedirections: MAX_REDIRECTIONS,
      retryDelayOnTryAgain: RETRY_DELAY_ON_TRY_AGAIN_MS,
      retryDelayOnClusterDown: RETRY_DELAY_ON_CLUSTER_DOWN_MS,
      // 0 disables ioredis' resend of a command whose connection closed (it may have run).
      retryDelayOnFailover: failFast ? 0 : RETRY_DELAY_ON_FAILOVER_MS,
      slotsRefreshTimeout: Math.max(options.commandTimeoutMs, 1000),
      clusterRetryStrategy: (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
      redisOptions: {
        ...(username === "" ? {} : { username }),
        ...(password === "" ? {} : { password }),
        ...(tlsWanted ? { tls: options.tls ?? {} } : {}),
        connectionName: options.connectionName,
        protocol: 2,
        commandTimeout: options.commandTimeoutMs,
        connectTimeout: Math.max(options.commandTimeoutMs, 1000),
        maxRetriesPerRequest: failFast ? 0 : 1,
        autoResendUnfulfilledCommands: !failFast,
      },
    },
  );
  let lastErrorLogged = "";
  const logError = (error: Error, node?: string): void => {
    if (error.message === lastErrorLogged) return;
    lastErrorLogged = error.message;
    options.logger.warn(
      { connection: options.connectionName, node, err: error },
      "redis connection error",
    );
  };
  client.on("error", (error: Error) => logError(error));
  client.on("node error", (error: Error, node: string) => logError(error, node));
  client.on("ready", () => {
    if (lastErrorLogged !== "")
      options.logger.info({ connection: options.connectionName }, "redis connection restored");
    lastErrorLogged = "";
  });
  return client;
}
