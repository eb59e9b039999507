import { Redis } from "ioredis";
import type { Logger } from "pino";
import {
  clearConnectionError,
  explainRedisError,
  recordConnectionError,
} from "./explainRedisError.js";

export interface RedisClientOptions {
  url: string;
  /** Wins over a password inside the URL when non-empty. */
  password: string;
  /** Shown in CLIENT LIST, so operators can tell the janitor's connections apart. */
  connectionName: string;
  /**
   * Bounds every command. Without it a command issued while Redis is down waits about 73 s
   * (ioredis' default reconnect schedule) before failing.
   */
  commandTimeoutMs: number;
  logger: Logger;
  /**
   * Fail commands at once when the connection drops instead of resending them after reconnect:
   * for the lease, where a late renewal is worse than none.
   */
  failFast?: boolean;
}

/**
 * The one place connections are made. Sentinel and Cluster belong here too: everything else
 * takes the client it is given, and every script declares all its keys.
 */
export function createRedisClient(options: RedisClientOptions): Redis {
  const client = new Redis(options.url, {
    ...(options.password === "" ? {} : { password: options.password }),
    connectionName: options.connectionName,
    protocol: 2,
    lazyConnect: true,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: Math.max(options.commandTimeoutMs, 1000),
    // One retry across a reconnect, then fail: the caller decides what a failure means.
    maxRetriesPerRequest: options.failFast === true ? 0 : 1,
    autoResendUnfulfilledCommands: options.failFast !== true,
    retryStrategy: (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
    enableOfflineQueue: true,
  });
  let lastErrorLogged = "";
  client.on("error", (error: Error) => {
    recordConnectionError(client, error);
    // Reconnect loops repeat the same error many times a second; log each distinct one once.
    if (error.message === lastErrorLogged) return;
    lastErrorLogged = error.message;
    options.logger.warn(
      {
        connection: options.connectionName,
        err: error,
        problem: explainRedisError(error, { url: options.url }),
      },
      "redis connection error",
    );
  });
  client.on("ready", () => {
    clearConnectionError(client);
    if (lastErrorLogged !== "") {
      options.logger.info({ connection: options.connectionName }, "redis connection restored");
    }
    lastErrorLogged = "";
  });
  return client;
}
