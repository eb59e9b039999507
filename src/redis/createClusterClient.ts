import { Cluster, type Redis } from "./ioredis.js";
import type { ConnectionLogger } from "../logging/silentLogger.js";
import {
  credentialsOf,
  parseHostPort,
  tlsOptions,
  type RedisEndpointSettings,
} from "./connectionOptions.js";
import { clearConnectionError, recordConnectionError } from "./lastConnectionError.js";
import { withAclAdvice } from "./aclAdvice.js";
import type { ConnectionProblems } from "./ConnectionProblems.js";

export type ClusterClientOptions = RedisEndpointSettings & {
  /** Shown in CLIENT LIST on every node. */
  connectionName: string;
  /** Bounds every command on every node (see createRedisClient). */
  commandTimeoutMs: number;
  logger: ConnectionLogger;
  /** As in createRedisClient: no resend across a reconnect (the lease). */
  failFast?: boolean; /** Shared by a process' connections: their trouble is logged once per change, not each. */
  problems?: ConnectionProblems;
};

const FAILED = "redis connection error";

/** Delays between retries of a command the cluster asked us to retry (none of them ran). */
const RETRY_DELAY_ON_TRY_AGAIN_MS = 100;
const RETRY_DELAY_ON_CLUSTER_DOWN_MS = 200;
const RETRY_DELAY_ON_FAILOVER_MS = 200;
/** MOVED/ASK/TRYAGAIN/CLUSTERDOWN retries per command: about 2-3 s of a migration or failover. */
const MAX_REDIRECTIONS = 16;

/**
 * A Redis Cluster client with the same options and failure behaviour as createRedisClient:
 * `redis.url` is one seed node and `redis.nodes` more (any one that answers gives the slot map);
 * the URL's scheme, credentials, ACL user and TLS files apply to every node.
 *
 * Redirections are the cluster telling us a command did not run where we sent it (MOVED and ASK
 * after a slot migration, TRYAGAIN while a multi-key command's keys are split mid-migration,
 * CLUSTERDOWN during a failover): ioredis retries those, which cannot run anything twice. A
 * command whose connection closed may or may not have run: it is retried only when the caller
 * can afford that (not failFast), which is safe for our scripts since each is idempotent.
 */
export function createClusterClient(options: ClusterClientOptions): Cluster {
  const seed = new URL(options.url);
  const isTls = seed.protocol === "rediss:";
  const failFast = options.failFast === true;
  const client = new Cluster(
    [
      { host: seed.hostname.replace(/^\[|\]$/gu, ""), port: Number(seed.port || 6379) },
      ...(options.nodes ?? []).map(parseHostPort),
    ],
    {
      scaleReads: "master",
      lazyConnect: true,
      // Its CLUSTER INFO is one more command on a new connection, under the command bound (see
      // boundSetupBySlotsRefresh); a cluster that is down answers CLUSTERDOWN, which is retried.
      enableReadyCheck: false,
      enableOfflineQueue: true,
      maxRedirections: MAX_REDIRECTIONS,
      retryDelayOnTryAgain: RETRY_DELAY_ON_TRY_AGAIN_MS,
      retryDelayOnClusterDown: RETRY_DELAY_ON_CLUSTER_DOWN_MS,
      // 0 disables ioredis' resend of a command whose connection closed (it may have run).
      retryDelayOnFailover: failFast ? 0 : RETRY_DELAY_ON_FAILOVER_MS,
      slotsRefreshTimeout: Math.max(options.commandTimeoutMs, 1000),
      clusterRetryStrategy: (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
      redisOptions: {
        ...credentialsOf(options, seed),
        ...(isTls ? { tls: tlsOptions(options) } : {}),
        connectionName: options.connectionName,
        // CLIENT SETINFO (7.2+) is not in the least-privilege ACL: denied, it would fill ACL LOG.
        disableClientInfo: true,
        protocol: 2,
        commandTimeout: options.commandTimeoutMs,
        connectTimeout: Math.max(options.commandTimeoutMs, 1000),
        maxRetriesPerRequest: failFast ? 0 : 1,
        autoResendUnfulfilledCommands: !failFast,
      },
    },
  );
  wrapEveryCommand(client, options.commandTimeoutMs);
  boundSetupBySlotsRefresh(client);
  logConnectionTrouble(client, options);
  return client;
}

/** Connection errors and the return to ready, logged (or told to the process' problems). */
function logConnectionTrouble(client: Cluster, options: ClusterClientOptions): void {
  let lastErrorLogged = "";
  const logError = (error: Error, node?: string): void => {
    recordConnectionError(client, error);
    if (options.problems !== undefined) {
      const fields = node === undefined ? {} : { node };
      options.problems.failed(options.connectionName, error, client, { msg: FAILED, fields });
      return;
    }
    if (error.message === lastErrorLogged) return;
    lastErrorLogged = error.message;
    options.logger.warn({ connection: options.connectionName, node, err: error }, FAILED);
  };
  client.on("error", (error: Error) => logError(error));
  client.on("node error", (error: Error, node: string) => logError(error, node));
  client.on("ready", () => {
    clearConnectionError(client);
    options.problems?.ready(options.connectionName);
    if (lastErrorLogged !== "")
      options.logger.info({ connection: options.connectionName }, "redis connection restored");
    lastErrorLogged = "";
  });
}

/**
 * As on one server, for every command the cluster client is given:
 * - a NOPERM names the ACL rule to add, wherever the failure surfaces;
 * - the command is bounded from the moment it is sent. ioredis starts the bound only when it hands
 *   the command to a node: one waiting in the cluster's offline queue while no slot map could be
 *   fetched waited without one (a lease attempt, and so the daemon's stop, hung).
 */
function wrapEveryCommand(client: Cluster, commandTimeoutMs: number): void {
  const send = client.sendCommand.bind(client);
  const wrapped = new WeakSet<object>();
  client.sendCommand = (command, ...rest) => {
    // Redirections and the offline queue send the same command again: wrap it once (and a
    // command's timer is set once: the node's own setTimeout leaves this one in place).
    if (!wrapped.has(command)) {
      wrapped.add(command);
      const reject = command.reject;
      command.reject = (error: Error) => reject(withAclAdvice(error));
      command.setTimeout(commandTimeoutMs);
    }
    return send(command, ...rest);
  };
}

/**
 * A slot map refresh is bounded by slotsRefreshTimeout, not by the bound on one command. ioredis
 * fetches the map over a new connection that copies the node's options, commandTimeout included,
 * and starts that timer before the connection is up: with the lease's 200 ms, every refresh
 * failed whenever setting up a connection took longer (a loaded host, a TLS handshake far away),
 * and the lease's client reconnected for ever without a slot map (README "Redis Cluster").
 */
function boundSetupBySlotsRefresh(client: Cluster): void {
  client.on("+node", (node: Redis) => {
    const duplicate = node.duplicate.bind(node);
    node.duplicate = (override) => duplicate({ ...override, commandTimeout: undefined });
  });
}
