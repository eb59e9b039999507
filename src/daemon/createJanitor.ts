import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { JanitorConfig } from "../core/configTypes.js";
import type { GroupSource } from "../core/GroupSet.js";
import { janitorConsumerName } from "../core/janitorConsumerName.js";
import { keysOutsideSourceSlot, type ResolvedGroup } from "../core/resolveGroup.js";
import { slotRefusal } from "../core/slotRule.js";
import { Lease } from "../lease/Lease.js";
import { Maintenance } from "../maintenance/Maintenance.js";
import { RedriveTaskRunner } from "../maintenance/RedriveTaskRunner.js";
import { createRedriveTaskMetrics } from "../metrics/redriveTaskMetrics.js";
import { createJanitorMetrics, type JanitorMetrics } from "../metrics/janitorMetrics.js";
import {
  createMaintenanceMetrics,
  type MaintenanceMetrics,
} from "../metrics/maintenanceMetrics.js";
import type { ConnectionProblems } from "../redis/ConnectionProblems.js";
import { connectRedis, isCluster } from "../redis/connectRedis.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ScrapeRefresher } from "../scrape/createScrapeRefresher.js";
import { registerScripts, type ScriptedRedis } from "../scripts/scriptedRedis.js";
import { checkRequeueTarget } from "../sweep/checkRequeueTarget.js";
import { EventWriter } from "../events/EventWriter.js";
import { instanceId } from "../events/instanceId.js";
import { createEventMetrics } from "../metrics/eventMetrics.js";
import { recordLeaseEvents, recordMaintenanceEvents, recordSweepEvents } from "./recordEvents.js";
import { recordSweepMetrics } from "./recordSweep.js";
import { Supervisor } from "./Supervisor.js";

/** How long the sweep connection waits for one reply; a page script is bounded to milliseconds. */
const SWEEP_COMMAND_TIMEOUT_MS = 10_000;

/** A connection named `stream-janitor:<name>` in CLIENT LIST, with its own bound on one command. */
export type ConnectNamed = (
  name: string,
  commandTimeoutMs: number,
  failFast?: boolean,
) => RedisClient;

/** Opens connections the way both `run` and `sweep` do; the caller closes them. */
export function namedConnections(
  config: JanitorConfig,
  logger: Logger,
  problems?: ConnectionProblems,
): ConnectNamed {
  return (name, commandTimeoutMs, failFast = false) =>
    connectRedis(config.redis, {
      connectionName: `stream-janitor:${name}`,
      commandTimeoutMs,
      logger,
      failFast,
      problems,
    });
}

export interface JanitorDependencies {
  logger: Logger;
  /** The metric families are registered here (a throwaway one for the one-shot `sweep`). */
  registry: Registry;
  version: string;
  connect: ConnectNamed;
}

/** The leader's work for the groups: sweep passes, then maintenance under the same fence. */
export interface SweepWork {
  readonly supervisor: Supervisor;
  readonly maintenance: Maintenance;
}

/** What `run` and `sweep` both build: the lease, and the sweeps and maintenance done under it. */
export interface Janitor {
  readonly metrics: JanitorMetrics;
  /** Sweeps and maintenance (scripts registered). */
  readonly sweepRedis: ScriptedRedis;
  /** The lease's own connection: renewals must not queue behind sweeps. */
  readonly leaseRedis: RedisClient;
  /** Not started: `run` starts its loop, `sweep` tries once. */
  readonly lease: Lease;
  /** The advisory events (best effort, on the sweep connection, outside every script). */
  readonly events: EventWriter;
  /** Runs the redrive tasks while leading (`run` starts it; `sweep` does not). */
  readonly redriveTasks: RedriveTaskRunner;
  /**
   * Builds maintenance and the supervisor from `settings` (the configuration in effect now,
   * after any reload), following `groups`, acting under the lease's current term; its outcomes
   * are counted and written as events, and a group a sweep changed is marked in `refresher`
   * (`run`'s scrape; the one-shot `sweep` has none).
   */
  createSweepWork(
    settings: Pick<JanitorConfig, "sweep" | "retention">,
    groups: readonly ResolvedGroup[] | GroupSource,
    refresher?: Pick<ScrapeRefresher, "markChanged">,
  ): SweepWork;
  /** Logs, per group, the refusal its sweeps would meet (a requeue target of the wrong kind). */
  reportRefusals(groups: readonly ResolvedGroup[]): Promise<void>;
  /** Logs the groups whose keys lie outside the source stream's hash slot (refused on Cluster). */
  warnOutsideSlot(groups: readonly ResolvedGroup[]): void;
}

/**
 * The one factory of the runtime's parts for `run` (startDaemon) and `sweep` (runSweepCommand):
 * connections, scripts, lease (with its gauges), supervisor (its outcomes recorded as metrics)
 * and maintenance, built the same way for both.
 */
export function createJanitor(config: JanitorConfig, dependencies: JanitorDependencies): Janitor {
  const { logger, registry, connect } = dependencies;
  const metrics = createJanitorMetrics(registry, dependencies.version);
  const sweepRedis = registerScripts(connect("sweep", SWEEP_COMMAND_TIMEOUT_MS));
  // Renewals must fail fast: a reply slower than one retry period is as good as none.
  const leaseRedis = connect("lease", Math.max(config.lease.retryPeriodMs, 50), true);
  const cluster = isCluster(config.redis);
  const lease = new Lease({
    redis: leaseRedis,
    ...config.lease,
    logger,
    fencePerSlot: cluster,
    metrics,
  });
  const events = new EventWriter({
    redis: sweepRedis,
    streamKey: config.events.stream,
    maxLen: config.events.maxLen,
    by: instanceId(),
    metrics: createEventMetrics(registry),
    logger,
  });
  recordLeaseEvents(lease, events);
  const maintenanceMetrics = createMaintenanceMetrics(registry);
  const parts = { sweepRedis, logger, metrics, maintenanceMetrics, events, lease };
  const redriveTasks = new RedriveTaskRunner({
    redis: sweepRedis,
    leaseKey: config.lease.key,
    budgetMs: config.sweep.maxScriptMs,
    currentTerm: () => lease.term,
    logger,
    metrics: createRedriveTaskMetrics(registry),
    events,
  });
  return {
    metrics,
    sweepRedis,
    leaseRedis,
    lease,
    events,
    redriveTasks,
    createSweepWork: (settings, groups, refresher) =>
      buildSweepWork(parts, settings, groups, refresher),
    reportRefusals: (groups) => reportRefusals(sweepRedis, logger, groups),
    warnOutsideSlot: (groups) => warnOutsideSlot(cluster, logger, groups),
  };
}

/** What the sweep work of one janitor shares: its connection, logger, metrics, events, lease. */
interface SweepParts {
  sweepRedis: ScriptedRedis;
  logger: Logger;
  metrics: JanitorMetrics;
  maintenanceMetrics: MaintenanceMetrics;
  events: EventWriter;
  lease: Lease;
}

/** See Janitor.createSweepWork. */
function buildSweepWork(
  parts: SweepParts,
  settings: Pick<JanitorConfig, "sweep" | "retention">,
  groups: readonly ResolvedGroup[] | GroupSource,
  refresher: Pick<ScrapeRefresher, "markChanged"> | undefined,
): SweepWork {
  const { sweepRedis, logger, events, lease } = parts;
  const maintenance = new Maintenance({
    redis: sweepRedis,
    logger,
    metrics: parts.maintenanceMetrics,
    retention: settings.retention,
    janitorConsumer: janitorConsumerName(settings),
    maxTrimmedPerPass: settings.sweep.maxEntriesPerGroup,
  });
  const supervisor = new Supervisor({
    groups,
    redis: sweepRedis,
    logger,
    ...settings.sweep,
    currentTerm: () => lease.term,
    maintenance,
  });
  recordSweepMetrics(supervisor, parts.metrics, logger);
  recordSweepEvents(supervisor, events);
  recordMaintenanceEvents(maintenance, events);
  if (refresher !== undefined) {
    supervisor.on("group-changed", (groupId) => refresher.markChanged(groupId));
  }
  return { supervisor, maintenance };
}

/** See Janitor.reportRefusals. */
async function reportRefusals(
  sweepRedis: ScriptedRedis,
  logger: Logger,
  groups: readonly ResolvedGroup[],
): Promise<void> {
  for (const group of groups) {
    const refusal = await checkRequeueTarget(sweepRedis, group).catch(() => undefined);
    if (refusal !== undefined) logger.error({ stream: group.stream, group: group.group }, refusal);
  }
}

/** See Janitor.warnOutsideSlot. */
function warnOutsideSlot(cluster: boolean, logger: Logger, groups: readonly ResolvedGroup[]): void {
  for (const group of groups) {
    if (cluster) {
      // Listed groups were refused at load already; a discovered one is refused by sweeps.
      const refusal = slotRefusal(group);
      if (refusal !== undefined)
        logger.error({ stream: group.stream, group: group.group }, refusal);
      continue;
    }
    const outside = keysOutsideSourceSlot(group);
    if (outside.length > 0) {
      logger.warn(
        { stream: group.stream, group: group.group, keys: outside },
        "keys outside the source's hash slot: fine on one server, CROSSSLOT on Redis Cluster",
      );
    }
  }
}
