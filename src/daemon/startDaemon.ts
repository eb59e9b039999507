import type { Logger } from "pino";
import { collectDefaultMetrics } from "prom-client";
import type { JanitorConfig } from "../core/configTypes.js";
import { GroupSet } from "../core/GroupSet.js";
import { resolveGroup } from "../core/resolveGroup.js";
import type { StatusBoard } from "../core/groupStatus.js";
import type { HttpRoute } from "../http/HttpRoute.js";
import { statusJsonRoute } from "../http/statusJsonRoute.js";
import { JanitorRegistry } from "../metrics/JanitorRegistry.js";
import { ConnectionProblems } from "../redis/ConnectionProblems.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ScrapeRefresher } from "../scrape/createScrapeRefresher.js";
import { createConsoleRoute } from "../ui/createConsole.js";
import { SweepLog } from "../ui/SweepLog.js";
import { bootInBackground, type BootParts } from "./bootInBackground.js";
import { createConsoleActions, type UiActionRunnerFactory } from "./consoleActions.js";
import { createReloadGauge } from "./configReload.js";
import { createJanitor, namedConnections, type SweepWork } from "./createJanitor.js";
import { createReloader, type Reloader } from "./createReloader.js";
import {
  buildDiscovery,
  buildHistory,
  buildSampler,
  buildScrape,
  teardownConnections,
  type DaemonParts,
} from "./daemonParts.js";
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
    const connect = teardownConnections(namedConnections(config, logger, problems), teardown);
    const janitor = createJanitor(config, { logger, registry, version, connect });
    // Runs after the lease and supervisor stopped, before the connections close.
    teardown.push("events", () => janitor.events.flush(EVENTS_FLUSH_MS));
    // The one owner of the list of groups: the refresher and the supervisor follow its changes.
    const groupSet = new GroupSet(config.groups.map(resolveGroup));
    janitor.warnOutsideSlot(groupSet.current());
    const history = buildHistory(config);
    const parts = { config, logger, registry, janitor, groupSet, teardown, connect, history };
    const { refresher, metricsRedis } = buildScrape(parts);
    const discovery = buildDiscovery(parts);
    const sampler = buildSampler(parts, refresher);
    // The leader's recent sweeps for the console (followed once the sweep work exists, below).
    const sweeps = new SweepLog();
    const http = await startHttp(parts, {
      refresher,
      metricsRedis,
      board: sampler,
      sweeps,
      uiActions: dependencies.uiActions,
    });
    const reloader = startInBackground(parts, {
      problems,
      refresher,
      sampler,
      discovery,
      sweeps,
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
 * The HTTP endpoint: /metrics, /livez, /readyz, and the paths beyond. The status board is the
 * seam: the web console (/ui) is built from the same `board`.
 */
async function startHttp(
  parts: DaemonParts,
  seen: {
    refresher: ScrapeRefresher;
    metricsRedis: RedisClient;
    board: StatusBoard;
    sweeps: SweepLog;
    /** With http.ui.actions: the operator commands' code the console's actions run. */
    uiActions: UiActionRunnerFactory | undefined;
  },
) {
  const { config, logger, registry, groupSet, teardown } = parts;
  const { board, sweeps, metricsRedis } = seen;
  const routes: HttpRoute[] = [statusJsonRoute(board)];
  if (config.http.ui.enabled) {
    const actions = { runner: seen.uiActions, connect: parts.connect, registry, logger };
    const { history } = parts;
    const pages = { board, sweeps, groups: groupSet, redis: metricsRedis, config, history };
    routes.push(createConsoleRoute({ ...pages, actions: createConsoleActions(config, actions) }));
  }
  const http = await startHttpEndpoint({
    config,
    registry,
    logger,
    refresher: seen.refresher,
    metricsRedis,
    routes,
  });
  teardown.push("http", () => http.close());
  return http;
}

/**
 * The reloader (SIGHUP) and the boot in the background (Redis, lease, sweeps); the sweep work,
 * once built, is followed by reloads and by the console's log of sweeps.
 */
function startInBackground(
  parts: DaemonParts,
  started: Pick<BootParts, "problems" | "refresher" | "sampler" | "discovery" | "onFatal"> & {
    sweeps: SweepLog;
  },
): Reloader {
  const { config, logger, registry, janitor, groupSet } = parts;
  const { discovery, sweeps } = started;
  let sweepWork: SweepWork | undefined;
  const reloader = createReloader(config, {
    logger,
    gauge: createReloadGauge(registry),
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
    ...parts,
    ...started,
    running: reloader.running,
    onSweepWork: (work) => {
      sweepWork = work;
      sweeps.follow(work.supervisor);
      parts.history?.follow(work.supervisor);
    },
  });
  return reloader;
}
