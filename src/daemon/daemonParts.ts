import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { JanitorConfig } from "../core/configTypes.js";
import type { GroupSet } from "../core/GroupSet.js";
import { Discovery } from "../discovery/Discovery.js";
import { scanNodesOf } from "../discovery/scanNodes.js";
import { instanceId } from "../events/instanceId.js";
import { createStatusMetrics } from "../metrics/statusMetrics.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { createScrapeRefresher, type ScrapeRefresher } from "../scrape/createScrapeRefresher.js";
import { StatusSampler } from "../status/StatusSampler.js";
import { GroupHistory } from "../status/GroupHistory.js";
import type { ConnectNamed, Janitor } from "./createJanitor.js";
import type { TeardownStack } from "./TeardownStack.js";

/** Discovery sends single SCAN calls and bounded XINFO GROUPS pipelines. */
const DISCOVERY_COMMAND_TIMEOUT_MS = 2_000;

/** What the daemon's observers are built from. */
export interface DaemonParts {
  config: JanitorConfig;
  logger: Logger;
  registry: Registry;
  janitor: Janitor;
  groupSet: GroupSet;
  teardown: TeardownStack;
  connect: ConnectNamed;
  /** The groups' last minutes for the console (buildHistory); undefined when off. */
  history: GroupHistory | undefined;
}

/** Connections that close with the daemon (registered on the teardown as they open). */
export function teardownConnections(open: ConnectNamed, teardown: TeardownStack): ConnectNamed {
  return (name, commandTimeoutMs, failFast = false): RedisClient => {
    const client = open(name, commandTimeoutMs, failFast);
    teardown.push(`redis:${name}`, () => client.disconnect());
    return client;
  };
}

/** The scrape's gauges (PEL scans included), on the metrics connection, following the groups. */
export function buildScrape({ config, logger, janitor, groupSet, teardown, connect }: DaemonParts) {
  // The scrape's reads are bounded as a whole by metrics.scrapeTimeoutMs (README "Configuration"):
  // a shorter bound per command would fail the tail of a large scrape before that.
  const metricsRedis = connect("metrics", metricsCommandTimeoutMs(config));
  const refresher = createScrapeRefresher({
    redis: metricsRedis,
    groups: groupSet.current(),
    metrics: janitor.metrics,
    logger,
    config,
  });
  groupSet.on("change", (change) => refresher.setGroups(change.groups));
  teardown.push("metrics", () => refresher.stop());
  return { refresher, metricsRedis };
}

/** The `discover` patterns' scans, on a connection of their own, installing into the groups. */
export function buildDiscovery({
  config,
  logger,
  registry,
  groupSet,
  teardown,
  connect,
}: DaemonParts) {
  const discoveryRedis = connect("discovery", DISCOVERY_COMMAND_TIMEOUT_MS);
  const discovery = new Discovery({
    nodes: scanNodesOf(discoveryRedis),
    follow: discoveryRedis,
    groupSet,
    config,
    logger,
    registry,
  });
  teardown.push("discovery", () => discovery.stop());
  return discovery;
}

/**
 * Every replica judges every group (README "Group status"), on its own connection: a sample
 * never queues on the scrape's socket nor shares its per-command bound (the latency cost was
 * the same either way at 1,000 groups: test/bench/RESULTS.md, issue 24).
 */
export function buildSampler(parts: DaemonParts, refresher: ScrapeRefresher): StatusSampler {
  const { config, logger, registry, janitor, groupSet, teardown, connect, history } = parts;
  const sampler = new StatusSampler({
    redis: connect("status", metricsCommandTimeoutMs(config)),
    groups: groupSet.current(),
    config,
    metrics: createStatusMetrics(registry),
    pelScans: refresher.pelScans,
    logger,
    instance: instanceId(),
    isLeader: () => janitor.lease.term !== undefined,
    fencingToken: () => janitor.lease.term?.fencingToken ?? null,
    // Only the leader's sampler is asked to write (isLeader): replicas write no duplicates.
    writeEvent: (event) => janitor.events.write(event),
    ...(history && { history }),
  });
  groupSet.on("change", (change) => sampler.setGroups(change.groups));
  teardown.push("status", () => sampler.stop());
  return sampler;
}

/**
 * The metrics connection's bound on one command: a little over metrics.scrapeTimeoutMs, so the
 * scrape's own bound on its whole read (runPipelineBatches) is the one that fires, with its
 * message, and a large scrape is never cut short by a per-command bound shorter than it.
 */
function metricsCommandTimeoutMs(config: Pick<JanitorConfig, "metrics">): number {
  return config.metrics.scrapeTimeoutMs + 1000;
}

/**
 * The groups' last minutes for the console's charts (README "Web console"): only with the
 * console on and http.ui.historyMinutes > 0, since nothing else reads them.
 */
export function buildHistory(config: Pick<JanitorConfig, "http">): GroupHistory | undefined {
  const { enabled, historyMinutes } = config.http.ui;
  return enabled && historyMinutes > 0 ? new GroupHistory(historyMinutes) : undefined;
}
