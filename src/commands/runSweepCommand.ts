import { Registry } from "prom-client";
import type { JanitorConfig } from "../core/configTypes.js";
import { createJanitor, namedConnections, type Janitor } from "../daemon/createJanitor.js";
import type { Logger } from "pino";
import type { Supervisor } from "../daemon/Supervisor.js";
import { createLogger } from "../logging/createLogger.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { detectCapabilities } from "../redis/detectCapabilities.js";
import { toSummary, type GroupSummary, type GroupSweepResult } from "../sweep/GroupSweepResult.js";
import { discoverGroups } from "../discovery/discoverGroups.js";
import { EXIT } from "./exitCodes.js";
import type { Interruption } from "./Interruption.js";
import { explainRedisError } from "../redis/explainRedisError.js";
import { readVersion } from "./readVersion.js";

function describeGroup(summary: GroupSummary): string {
  const name = `${summary.stream}/${summary.group}`;
  if ("error" in summary) return `${name}: error: ${summary.error}`;
  const { claimed, requeued, reassigned, deadLettered, ghosts, complete } = summary;
  const partial =
    summary.interrupted === true
      ? " (interrupted by a stop)"
      : complete
        ? ""
        : " (budget reached before the end of the PEL)";
  return (
    `${name}: claimed ${claimed}, requeued ${requeued}, reassigned ${reassigned}, ` +
    `dead-lettered ${deadLettered}, ghosts ${ghosts}${partial}`
  );
}

/**
 * The janitor's parts as `run` builds them, on a registry nobody scrapes; `connections` collects
 * every connection it opens, to close them at the end.
 */
function buildJanitor(config: JanitorConfig, logger: Logger, connections: RedisClient[]): Janitor {
  const open = namedConnections(config, logger);
  return createJanitor(config, {
    logger,
    registry: new Registry(),
    version: readVersion(),
    connect: (name, commandTimeoutMs, failFast) => {
      const client = open(name, commandTimeoutMs, failFast);
      connections.push(client);
      return client;
    },
  });
}

/** Says on stderr who holds the lease this sweep could not take. */
async function reportLeaseHeld(config: JanitorConfig, janitor: Janitor): Promise<void> {
  const holder = await janitor.lease.holder().catch(() => "unknown" as const);
  const who =
    holder === undefined || holder === "unknown"
      ? "another process (it left no holder record)"
      : `another process: ${holder.host} (pid ${holder.pid}, fencing token ${holder.fencingToken})`;
  process.stderr.write(
    `stream-janitor: the lease ${config.lease.key} is held by ${who}; not sweeping\n`,
  );
}

/** The pass's summary on stdout: one JSON document, or a line per group. */
function printSummary(results: readonly GroupSweepResult[], json: boolean): void {
  const summary = { groups: results.map(toSummary) };
  if (json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else for (const group of summary.groups) process.stdout.write(`${describeGroup(group)}\n`);
}

/**
 * `stream-janitor sweep`: one pass over every group under the lease, then exit. With --json the
 * summary is the only thing on stdout (logs go to stderr).
 */
export async function runSweepCommand(
  config: JanitorConfig,
  options: { json: boolean; interruption: Interruption },
): Promise<number> {
  // Logs go to stderr, with or without --json: stdout carries the summary only.
  const logger = createLogger(config.log.level, process.stderr);
  const connections: RedisClient[] = [];
  const janitor = buildJanitor(config, logger, connections);
  const { sweepRedis, lease } = janitor;
  let supervisor: Supervisor | undefined;
  // A signal stops the sweep at a page boundary; the caller then exits 130 or 143.
  const { signal } = options.interruption;
  const onSignal = (): void => void supervisor?.stop();
  signal.addEventListener("abort", onSignal);
  try {
    await detectCapabilities(sweepRedis);
    const term = await lease.tryAcquireOnce();
    if (term === undefined) {
      await reportLeaseHeld(config, janitor);
      return EXIT.leaseHeld;
    }
    supervisor = janitor.createSweepWork(
      config,
      await discoverGroups(sweepRedis, config),
    ).supervisor;
    // Interrupted before the first page: nothing swept, every group reported as not complete.
    if (signal.aborted) void supervisor.stop();
    const results = (await supervisor.supervise(term)) ?? [];
    printSummary(results, options.json);
    // Interrupted groups carry no error: stopping is not failing.
    return results.some((result) => result.error !== undefined) ? EXIT.failure : EXIT.ok;
  } catch (error) {
    const problem = explainRedisError(error, { url: config.redis.url, client: sweepRedis });
    process.stderr.write(`stream-janitor: sweep failed: ${problem}\n`);
    return EXIT.failure;
  } finally {
    signal.removeEventListener("abort", onSignal);
    await supervisor?.stop();
    await lease.stop();
    // The events of this sweep and of the lease, bounded: they are best effort.
    await janitor.events.flush(1_000);
    for (const client of connections) client.disconnect();
  }
}
