import type { Logger } from "pino";
import { collectDefaultMetrics } from "prom-client";
import type { JanitorConfig } from "../core/configTypes.js";
import { GroupSet } from "../core/GroupSet.js";
import { resolveGroup } from "../core/resolveGroup.js";
import { Discovery } from "../discovery/Discovery.js";
import { scanNodesOf } from "../discovery/scanNodes.js";
import type { StatusBoard } from "../core/groupStatus.js";
import { instanceId } from "../events/instanceId.js";
import type { HttpRoute } from "../http/HttpRoute.js";
import { statusJsonRoute } from "../http/statusJsonRoute.js";
import { JanitorRegistry } from "../metrics/JanitorRegistry.js";
import { createStatusMetrics } from "../metrics/statusMetrics.js";
import { ConnectionProblems } from "../redis/ConnectionProblems.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { createScrapeRefresher } from "../scrape/createScrapeRefresher.js";
import { StatusSampler } from "../status/StatusSampler.js";
import { createConsoleRoute } from "../ui/createConsole.js";
import { SweepLog } from "../ui/SweepLog.js";
import { bootInBackground } from "./bootInBackground.js";
import { createConsoleActions, type UiActionRunnerFactory } from "./consoleActions.js";
import { createReloadGauge } from "./configReload.js";
import { createJanitor, namedConnections, type SweepWork } from "./createJanitor.js";
import { createReloader } from "./createReloader.js";
import { startHttpEndpoint } from "./startHttpEndpoint.js";
import { TeardownStack } from "./TeardownStack.js";

export interface RunningDaemon {
  readonly httpUrl: string;
  /**
   * SIGHUP: loads the configuration again and applies groups, sweep, retention and log settings
   * without touching the lease, and reads the http.auth file again (a rotated secret). A load
   * that fails is logged with every problem and ignored. Resolves to whether the new
   * configuration was applied. Reloads run one at a time.
   */
  reload(load: () => Promise<JanitorConfig>): Promise<boolean>;
  /** Graceful stop: sweeps end at a page boundary, the lease is released, then everything closes. */
  stop(): Promise<void>;
  /** One scan of the `discover` patterns now (tests drive discovery with it, without timers). */
  discoverOnce(): Promise<unknown>;
}

export interface DaemonDependencies {
  logger: Logger;
  version: string;
  /** Called when the daemon cannot go on (an unsupported Redis server); the caller exits. */
  onFatal: (error: unknown) => void;
  /** With http.ui.actions: the operator commands' code the console's actions run. */
  uiActions?: UiActionRunnerFactory;
}

/** Discovery sends single SCAN calls and bounded XINFO GROUPS pipelines. */
const DISCOVERY_COMMAND_TIMEOUT_MS = 2_000;
/** How long shutdown waits for the last advisory events (lease-lost) before closing connections. */
const EVENTS_FLUSH_MS = 1_000;

/**
 * The composition root of `stream-janitor run`: builds the components in dependency order and
 * registers each one's teardown, so stop() takes them down in reverse (LIFO). It returns once
 * HTTP answers; waiting for Redis, the lease and the sweeps go on in the background (see
 * bootInBackground), so a Redis that is not there yet leaves the process alive, live and not ready.
 */
export async function startDaemon(
  config: JanitorConfig,
  dependencies: DaemonDependencies,
): Promise<RunningDaemon> {
  const { logger, version } = dependencies;
  const teardown = new TeardownStack(logger);
  try {
    const registry = new JanitorRegistry();
    // prom-client's process_* and nodejs_* (memory, CPU, descriptors, event-loop lag, GC),
    // unprefixed as every Node exporter has them; a fixed cost per scrape whatever the groups.
    // Only here: they fail `promtool check metrics` (three gauges end in _total), so the lint
    // test checks a registry of the project's own families.
    collectDefaultMetrics({ register: registry });
    // The daemon's connections share one account of their trouble: said once per change.
    const problems = new ConnectionProblems(logger, config.redis.url);
    const open = namedConnections(config, logger, problems);
    const connect = (name: string, commandTimeoutMs: number, failFast = false): RedisClient => {
      const client = open(name, commandTimeoutMs, failFast);
      teardown.push(`redis:${name}`, () => client.disconnect());
      return client;
    };
    const janitor = createJanitor(config, { logger, registry, version, connect });
    // Runs after the lease and supervisor stopped, before the connections close.
    teardown.push("events", () => janitor.events.flush(EVENTS_FLUSH_MS));
    // The scrape's reads are bounded as a whole by metrics.scrapeTimeoutMs (README "Configuration"):
    // a shorter bound per command would fail the tail of a large scrape before that.
    const metricsRedis = connect("metrics", metricsCommandTimeoutMs(config));
    const reloadGauge = createReloadGauge(registry);
    // The one owner of the list of groups: the refresher and the supervisor follow its changes.
    const groupSet = new GroupSet(config.groups.map(resolveGroup));
    janitor.warnOutsideSlot(groupSet.current());
    const refresher = createScrapeRefresher({
      redis: metricsRedis,
      groups: groupSet.current(),
      metrics: janitor.metrics,
      logger,
      config,
    });
    groupSet.on("change", (change) => refresher.setGroups(change.groups));
    teardown.push("metrics", () => refresher.stop());
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
    // Every replica judges every group (README "Group status"), on its own connection: a sample
    // never queues on the scrape's socket nor shares its per-command bound (the latency cost was
    // the same either way at 1,000 groups: test/bench/RESULTS.md, issue 24).
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
    });
    groupSet.on("change", (change) => sampler.setGroups(change.groups));
    teardown.push("status", () => sampler.stop());
    // The HTTP paths beyond /metrics, /livez and /readyz. The status board is the seam: the web
    // console (/ui) is built from the same `board`.
    const board: StatusBoard = sampler;
    const routes: HttpRoute[] = [statusJsonRoute(board)];
    // The leader's recent sweeps for the console (followed once the sweep work exists, below).
    const sweeps = new SweepLog();
    if (config.http.ui.enabled) {
      const actions = { runner: dependencies.uiActions, connect, registry, logger };
      const parts = { board, sweeps, groups: groupSet, redis: metricsRedis, config };
      routes.push(createConsoleRoute({ ...parts, actions: createConsoleActions(config, actions) }));
    }
    const http = await startHttpEndpoint({
      config,
      registry,
      logger,
      refresher,
      metricsRedis,
      routes,
    });
    teardown.push("http", () => http.close());

    let sweepWork: SweepWork | undefined;
    const reloader = createReloader(config, {
      logger,
      gauge: reloadGauge,
      groupSet,
      discovery,
      janitor,
      sweepWork: () => sweepWork,
      // The leader writes the events; a standby reloads just the same, silently.
      advise: (event) => {
        if (janitor.lease.term !== undefined) janitor.events.write(event);
      },
    });
    bootInBackground({
      config,
      logger,
      problems,
      janitor,
      groupSet,
      refresher,
      sampler,
      discovery,
      teardown,
      running: reloader.running,
      onSweepWork: (work) => {
        sweepWork = work;
        sweeps.follow(work.supervisor);
      },
      onFatal: dependencies.onFatal,
    });
    return {
      httpUrl: http.url,
      reload: async (load) => {
        const applied = await reloader.reload(load);
        // A rotated http.auth secret (same file, new content) takes effect with the reload.
        if (applied) await http.rereadCredentials();
        return applied;
      },
      stop: () => teardown.run(),
      discoverOnce: () => discovery.discoverOnce(),
    };
  } catch (error) {
    await teardown.run();
    throw error;
  }
}

/**
 * The metrics connection's bound on one command: a little over metrics.scrapeTimeoutMs, so the
 * scrape's own bound on its whole read (runPipelineBatches) is the one that fires, with its
 * message, and a large scrape is never cut short by a per-command bound shorter than it.
 */
function metricsCommandTimeoutMs(config: Pick<JanitorConfig, "metrics">): number {
  return config.metrics.scrapeTimeoutMs + 1000;
}
