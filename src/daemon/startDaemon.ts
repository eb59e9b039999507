import type { Logger } from "pino";
import { collectDefaultMetrics } from "prom-client";
import type { JanitorConfig } from "../core/configTypes.js";
import { startHttpServer } from "../http/createHttpServer.js";
import { Lease } from "../lease/Lease.js";
import { createJanitorMetrics } from "../metrics/janitorMetrics.js";
import { JanitorRegistry } from "../metrics/JanitorRegistry.js";
import { connectRedis, isCluster } from "../redis/connectRedis.js";
import { registerScripts } from "../scripts/scriptedRedis.js";
import { type RedisClient } from "../redis/RedisClient.js";
import { checkRequeueTarget } from "../sweep/checkRequeueTarget.js";
import { slotRefusal } from "../core/slotRule.js";
import { keysOutsideSourceSlot, resolveGroup, type ResolvedGroup } from "../core/resolveGroup.js";
import { createScrapeRefresher } from "../scrape/createScrapeRefresher.js";
import { createMaintenanceMetrics } from "../metrics/maintenanceMetrics.js";
import { janitorConsumerName } from "../core/janitorConsumerName.js";
import { Maintenance } from "../maintenance/Maintenance.js";
import { Supervisor } from "./Supervisor.js";
import { TeardownStack } from "./TeardownStack.js";
import { waitForRedis } from "./waitForRedis.js";
import { GroupSet } from "../core/GroupSet.js";
import { describeServer } from "./describeServer.js";
import { explainRedisError } from "../redis/explainRedisError.js";
import { lastConnectionError } from "../redis/lastConnectionError.js";
import { maskRedisUrl } from "../config/formatEffectiveConfig.js";
import { checkHasWork } from "../config/checkHasWork.js";
import { createReloadGauge, reloadProblems, settingsNeedingRestart } from "./configReload.js";
import { Discovery } from "../discovery/Discovery.js";
import { scanNodesOf } from "../discovery/scanNodes.js";

export interface RunningDaemon {
  readonly httpUrl: string;
  /**
   * SIGHUP: loads the configuration again and applies groups, sweep, retention and log settings
   * without touching the lease. A load that fails is logged with every problem and ignored.
   * Resolves to whether the new configuration was applied. Reloads run one at a time.
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
}

/** How long the sweep connection waits for one reply; a page script is bounded to milliseconds. */
const SWEEP_COMMAND_TIMEOUT_MS = 10_000;
/** Discovery sends single SCAN calls and bounded XINFO GROUPS pipelines. */
const DISCOVERY_COMMAND_TIMEOUT_MS = 2_000;

/**
 * The composition root of `stream-janitor run`: builds the components in dependency order and
 * registers each one's teardown, so stop() takes them down in reverse (LIFO). It returns once
 * HTTP answers; waiting for Redis, the lease and the sweeps go on in the background, so a Redis
 * that is not there yet leaves the process alive, live and not ready.
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
    const metrics = createJanitorMetrics(registry, version);
    const maintenanceMetrics = createMaintenanceMetrics(registry);
    const connection = (name: string, commandTimeoutMs: number, failFast = false): RedisClient => {
      const client = connectRedis(config.redis, {
        connectionName: `stream-janitor:${name}`,
        commandTimeoutMs,
        logger,
        failFast,
      });
      teardown.push(`redis:${name}`, () => client.disconnect());
      return client;
    };
    const sweepRedis = registerScripts(connection("sweep", SWEEP_COMMAND_TIMEOUT_MS));
    // The scrape's reads are bounded as a whole by metrics.scrapeTimeoutMs (contract section 3):
    // a shorter bound per command would fail the tail of a large scrape before that.
    const metricsRedis = connection("metrics", metricsCommandTimeoutMs(config));
    // Renewals must fail fast: a reply slower than one retry period is as good as none.
    const leaseRedis = connection("lease", Math.max(config.lease.retryPeriodMs, 50), true);

    const reloadGauge = createReloadGauge(registry);
    const warnOutsideSlot = (groups: readonly ResolvedGroup[]): void => {
      for (const group of groups) {
        if (isCluster(config.redis)) {
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
    };
    // The one owner of the list of groups: the refresher and the supervisor follow its changes.
    const groupSet = new GroupSet(config.groups.map(resolveGroup));
    warnOutsideSlot(groupSet.current());
    const refresher = createScrapeRefresher({
      redis: metricsRedis,
      groups: groupSet.current(),
      metrics,
      logger,
      config,
    });
    groupSet.on("change", (change) => refresher.setGroups(change.groups));
    teardown.push("metrics", () => refresher.stop());
    const discoveryRedis = connection("discovery", DISCOVERY_COMMAND_TIMEOUT_MS);
    const nodes = scanNodesOf(discoveryRedis);
    const discovery = new Discovery({
      nodes,
      follow: discoveryRedis,
      groupSet,
      config,
      logger,
      registry,
    });
    teardown.push("discovery", () => discovery.stop());
    const http = await startHttpServer({
      ...config.http,
      registry,
      logger,
      beforeScrape: () => refresher.refresh(),
      isReady: () => refresher.ping(),
      notReadyReason: () => {
        const cause = lastConnectionError(metricsRedis);
        const problem = cause && explainRedisError(cause, { url: config.redis.url });
        return problem === undefined ? undefined : `redis is not answering: ${problem}`;
      },
    });
    teardown.push("http", () => http.close());

    let running = config;
    let supervisor: Supervisor | undefined;
    let maintenance: Maintenance | undefined;
    const reportRefusals = async (groups: readonly ResolvedGroup[]): Promise<void> => {
      for (const group of groups) {
        const refusal = await checkRequeueTarget(sweepRedis, group).catch(() => undefined);
        if (refusal !== undefined)
          logger.error({ stream: group.stream, group: group.group }, refusal);
      }
    };
    const apply = (next: JanitorConfig): void => {
      const restart = settingsNeedingRestart(running, next);
      if (restart.length > 0) {
        logger.warn(
          { keys: restart },
          `configuration reload: ${restart.join(", ")} changed; these take effect only after a restart`,
        );
      }
      logger.level = next.log.level;
      supervisor?.updateSettings(next.sweep);
      maintenance?.updateRetention(next.retention);
      const change = discovery.reconfigure(next);
      if (change !== undefined) {
        warnOutsideSlot([...change.added, ...change.updated]);
        void reportRefusals([...change.added, ...change.updated]);
      }
      // Retention (and later discovery) settings are read from `running` at each use.
      running = { ...next, redis: running.redis, lease: running.lease, http: running.http };
      logger.info(
        {
          groups: groupSet.current().length,
          added: change?.added.map((group) => group.id) ?? [],
          removed: change?.removed.map((group) => group.id) ?? [],
          updated: change?.updated.map((group) => group.id) ?? [],
          logLevel: next.log.level,
        },
        "configuration reloaded",
      );
    };
    let reloading: Promise<boolean> = Promise.resolve(true);
    const reload = (load: () => Promise<JanitorConfig>): Promise<boolean> => {
      reloading = reloading.then(async () => {
        logger.info("SIGHUP: reloading the configuration");
        let next: JanitorConfig;
        try {
          next = await load();
          checkHasWork(next);
        } catch (error) {
          reloadGauge.set(0);
          const problems = reloadProblems(error);
          logger.error(
            { problems },
            `configuration reload failed (${problems.length} problem${problems.length === 1 ? "" : "s"}); the running configuration stays in effect`,
          );
          return false;
        }
        apply(next);
        reloadGauge.set(1);
        return true;
      });
      return reloading;
    };

    const bootController = new AbortController();
    const boot = (async () => {
      const capabilities = await waitForRedis(
        sweepRedis,
        logger,
        bootController.signal,
        undefined,
        (error) => explainRedisError(error, { url: config.redis.url, client: sweepRedis }),
      );
      const server = await describeServer(sweepRedis).catch(() => undefined);
      const endpoint = maskRedisUrl(config.redis.url);
      const serverName =
        server === undefined ? "the server" : `${server.product} ${server.version}`;
      logger.info(
        {
          endpoint,
          server,
          mode: server?.mode,
          capabilities,
          groups: groupSet.current().length,
        },
        `connected to ${serverName} at ${endpoint}${server === undefined ? "" : ` (${server.mode})`}`,
      );
      refresher.setCapabilities(capabilities);
      refresher.start();
      // Say at start-up, on every replica, which groups will be refused (each sweep re-checks).
      await reportRefusals(groupSet.current());
      // After the listed groups' check: discovered ones (thousands, maybe) are checked by sweeps.
      await discovery.start();
      if (bootController.signal.aborted) return;
      const lease = new Lease({
        redis: leaseRedis,
        ...config.lease,
        logger,
        fencePerSlot: isCluster(config.redis),
      });
      const started = new Supervisor({
        groups: groupSet,
        redis: sweepRedis,
        logger,
        metrics,
        ...running.sweep,
        currentTerm: () => lease.term,
        onGroupChanged: (groupId) => refresher.markChanged(groupId),
        maintenance: (maintenance = new Maintenance({
          redis: sweepRedis,
          logger,
          metrics: maintenanceMetrics,
          retention: running.retention,
          janitorConsumer: janitorConsumerName(running),
          maxTrimmedPerPass: running.sweep.maxEntriesPerGroup,
        })),
      });
      lease.on("acquired", (term) => {
        metrics.leader.set(1);
        metrics.fencingToken.set(term.fencingToken);
        started.sweepSoon();
      });
      lease.on("lost", (reason) => {
        // Superseded: still the leader, "acquired" follows at once with the new term's token.
        if (reason === "superseded") metrics.fencingTokenMoves.inc();
        else metrics.leader.set(0);
      });
      // Pushed first, so it runs last: the sweep in flight ends before the lease is released.
      teardown.push("lease", () => lease.stop());
      supervisor = started;
      teardown.push("supervisor", () => started.stop());
      lease.start();
      started.start();
    })();
    boot.catch((error: unknown) => {
      if (!bootController.signal.aborted) dependencies.onFatal(error);
    });
    teardown.push("boot", async () => {
      bootController.abort();
      await boot.catch(() => undefined);
    });
    const discoverOnce = () => discovery.discoverOnce();
    return { httpUrl: http.url, reload, stop: () => teardown.run(), discoverOnce };
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
export function metricsCommandTimeoutMs(config: Pick<JanitorConfig, "metrics">): number {
  return config.metrics.scrapeTimeoutMs + 1000;
}
