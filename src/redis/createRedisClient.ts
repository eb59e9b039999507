import type { RedisOptions } from "ioredis";
import { Redis } from "./ioredis.js";
import type { ConnectionLogger } from "../logging/silentLogger.js";
import { endpointOptions, type RedisEndpointSettings } from "./connectionOptions.js";
import { withAclAdvice } from "./aclAdvice.js";
import type { ConnectionProblems } from "./ConnectionProblems.js";
import { describeResetAfterHandshake, describeTlsError } from "./describeTlsError.js";
import { clearConnectionError, recordConnectionError } from "./lastConnectionError.js";
import { reconnectWhenAbandoned } from "./reconnectWhenAbandoned.js";
import { SentinelTlsProbe } from "./sentinelTlsProbe.js";

export type RedisClientOptions = RedisEndpointSettings & {
  /** Shown in CLIENT LIST, so operators can tell the janitor's connections apart. */
  connectionName: string;
  /**
   * Bounds every command. Without it a command issued while Redis is down waits about 73 s
   * (ioredis' default reconnect schedule) before failing.
   */
  commandTimeoutMs: number;
  logger: ConnectionLogger;
  /**
   * Fail commands at once when the connection drops instead of resending them after reconnect:
   * for the lease, where a late renewal is worse than none.
   */
  failFast?: boolean; /** Shared by a process' connections: their trouble is logged once per change, not each. */
  problems?: ConnectionProblems;
};

/** ioredis' error once no Sentinel answered (it names only the last, wrapped, error). */
const UNREACHABLE_SENTINELS = /^All sentinels are unreachable/u;

/** The retry delay ioredis writes into its Sentinel errors. */
const RETRY_DELAY = /\bafter \d+ms\b/gu;

const FAILED = "redis connection error";

/** A replica (the old primary, after a failover) answers writes with READONLY. */
const READONLY = /^READONLY\b/u;

/** ioredis' options for one connection of the product (timeouts, retries, failover). */
function ioredisOptions(
  options: RedisClientOptions,
  endpoint: ReturnType<typeof endpointOptions>,
  maxRetryDelayMs: number,
): RedisOptions {
  return {
    ...endpoint,
    connectionName: options.connectionName,
    // CLIENT SETINFO (7.2+) is not in the least-privilege ACL: denied, it would fill ACL LOG.
    disableClientInfo: true,
    protocol: 2,
    lazyConnect: true,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: Math.max(options.commandTimeoutMs, 1000),
    sentinelCommandTimeout: Math.max(options.commandTimeoutMs, 1000),
    // One retry across a reconnect, then fail: the caller decides what a failure means.
    maxRetriesPerRequest: options.failFast === true ? 0 : 1,
    autoResendUnfulfilledCommands: options.failFast !== true,
    // Under Sentinel a reconnect asks the Sentinels for the primary again: cap the backoff low
    // so the promoted replica is found within a retry period or so of the switch.
    retryStrategy: (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), maxRetryDelayMs),
    // After a failover a connection may still reach the demoted primary: reconnect, which asks
    // the Sentinels again. The failed command is not resent (a page is simply swept next time).
    reconnectOnError: (error: Error) => READONLY.test(error.message),
    enableOfflineQueue: true,
  };
}

/** What a connection knows of its trouble since it was last ready. */
interface Trouble {
  /** The TLS problem behind its failures, if one was seen. */
  tlsProblem: string | undefined;
  /** The last error logged (without ioredis' growing retry delay); "" once ready. */
  lastErrorLogged: string;
}

/** The TLS problem an error shows, if any (Sentinel's, the handshake's, a reset before ready). */
function tlsProblemOf(
  error: Error,
  client: Redis,
  isTls: boolean,
  sentinelTls: SentinelTlsProbe | undefined,
  trouble: Trouble,
): string | undefined {
  // "All sentinels are unreachable ... Connection is closed": say why, if it was TLS.
  const sentinelProblem = UNREACHABLE_SENTINELS.test(error.message)
    ? sentinelTls?.tlsProblem
    : undefined;
  if (sentinelProblem !== undefined) error.message = `${sentinelProblem} (${error.message})`;
  // Kept for the operator-facing explanation of later failures (/readyz, start-up, sweep).
  recordConnectionError(client, error);
  // "connect": the socket (and TLS) is up but the connection was never ready.
  const resetBeforeReady = isTls && client.status === "connect" && trouble.tlsProblem === undefined;
  return (
    sentinelProblem ??
    describeTlsError(error) ??
    (resetBeforeReady ? describeResetAfterHandshake(error) : undefined)
  );
}

/**
 * Logs a connection's errors, each distinct one once (reconnect loops repeat the same error
 * many times a second; the retry delay in ioredis' Sentinel message, "Retrying from scratch
 * after 40ms", grows with every round: it does not make the error a new one), and its recovery.
 */
function logTrouble(
  client: Redis,
  options: RedisClientOptions,
  sentinelTls: SentinelTlsProbe | undefined,
  trouble: Trouble,
): void {
  const isTls = options.url.startsWith("rediss://");
  client.on("error", (error: Error) => {
    const tls = tlsProblemOf(error, client, isTls, sentinelTls, trouble);
    trouble.tlsProblem = tls ?? trouble.tlsProblem;
    const problems = options.problems;
    if (problems !== undefined) {
      const fields = tls === undefined ? {} : { tls };
      problems.failed(options.connectionName, error, client, { msg: tls ?? FAILED, fields });
      return;
    }
    const errorKey = error.message.replace(RETRY_DELAY, "after <delay>");
    if (errorKey === trouble.lastErrorLogged) return;
    trouble.lastErrorLogged = errorKey;
    options.logger.warn(
      { connection: options.connectionName, err: error, ...(tls === undefined ? {} : { tls }) },
      tls ?? FAILED,
    );
  });
  client.on("ready", () => {
    clearConnectionError(client);
    options.problems?.ready(options.connectionName);
    if (trouble.lastErrorLogged !== "") {
      options.logger.info({ connection: options.connectionName }, "redis connection restored");
    }
    trouble.lastErrorLogged = "";
    trouble.tlsProblem = undefined;
    sentinelTls?.clear();
  });
}

/**
 * The one place connections are made: every connection of the product (sweep, metrics, lease,
 * and through ioredis the Sentinel ones) gets the same TLS material, ACL user and topology.
 * Everything else takes the client it is given, and every script declares all its keys.
 */
export function createRedisClient(options: RedisClientOptions): Redis {
  const maxRetryDelayMs = options.mode === "sentinel" ? 400 : 2000;
  const endpoint = endpointOptions(options);
  const client = new Redis(ioredisOptions(options, endpoint, maxRetryDelayMs));
  const trouble: Trouble = { tlsProblem: undefined, lastErrorLogged: "" };
  explainFailures(client, () => trouble.tlsProblem);
  reconnectWhenAbandoned(client, {
    connectionName: options.connectionName,
    logger: options.logger,
    delayMs: maxRetryDelayMs,
  });
  const sentinelTls =
    endpoint.sentinelTLS === undefined
      ? undefined
      : new SentinelTlsProbe(endpoint.sentinelTLS, Math.max(options.commandTimeoutMs, 1000));
  if (sentinelTls !== undefined) {
    client.on("sentinelError", (error: Error) => sentinelTls.onSentinelError(error));
  }
  logTrouble(client, options, sentinelTls, trouble);
  return client;
}

const EXPLAINED = Symbol("stream-janitor:explained");

/**
 * Rewrites the message of every failed command, wherever it surfaces (sweep results, lease
 * outages, readiness, start-up): a NOPERM gets the ACL rule to add, and a timeout or closed
 * connection caused by a failed TLS handshake says so instead of just "Command timed out".
 */
function explainFailures(client: Redis, tlsProblem: () => string | undefined): void {
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command, ...rest) => {
    // The offline queue sends the same command again after a reconnect: wrap it once. A mark on
    // the command rather than a WeakSet: a scrape sends tens of thousands of commands, and every
    // WeakSet entry is work for the garbage collector.
    const marked = command as typeof command & { [EXPLAINED]?: true };
    if (marked[EXPLAINED] !== true) {
      marked[EXPLAINED] = true;
      const reject = command.reject;
      command.reject = (error: Error) => {
        const problem = tlsProblem();
        const isReply = error.name === "ReplyError";
        if (problem !== undefined && !isReply && !error.message.startsWith("TLS")) {
          error.message = `${problem} (${error.message})`;
        }
        reject(withAclAdvice(error));
      };
    }
    return send(command, ...rest);
  };
}
