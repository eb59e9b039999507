import type { Logger } from "pino";
import { maskRedisUrl } from "../config/formatEffectiveConfig.js";
import type { JanitorConfig } from "../core/configTypes.js";
import type { GroupSet } from "../core/GroupSet.js";
import type { Discovery } from "../discovery/Discovery.js";
import type { ConnectionProblems } from "../redis/ConnectionProblems.js";
import { explainRedisError } from "../redis/explainRedisError.js";
import type { ScrapeRefresher } from "../scrape/createScrapeRefresher.js";
import type { StatusSampler } from "../status/StatusSampler.js";
import type { Janitor, SweepWork } from "./createJanitor.js";
import { describeServer } from "./describeServer.js";
import type { TeardownStack } from "./TeardownStack.js";
import { waitForRedis } from "./waitForRedis.js";

export interface BootParts {
  config: JanitorConfig;
  logger: Logger;
  /** The connections' trouble as logged: the wait for Redis does not repeat a refusal said. */
  problems: ConnectionProblems;
  janitor: Janitor;
  groupSet: GroupSet;
  refresher: ScrapeRefresher;
  /** The group status: sampling starts once Redis answers, as the PEL scans do. */
  sampler: StatusSampler;
  discovery: Discovery;
  teardown: TeardownStack;
  /** The configuration in effect when the sweep work is built (a reload may come first). */
  running: () => JanitorConfig;
  /** Told the sweep work once it is built, so reloads reach it. */
  onSweepWork: (work: SweepWork) => void;
  /** Called when the daemon cannot go on (an unsupported Redis server); the caller exits. */
  onFatal: (error: unknown) => void;
}

/**
 * What `run` does once HTTP answers, in the background so that a Redis that is not there yet
 * leaves the process alive, live and not ready: wait for Redis, start the scrape's PEL scans,
 * report refusals, discover, then run the lease and the sweeps. Stopping aborts the wait.
 */
export function bootInBackground(parts: BootParts): void {
  const { config, logger, janitor, groupSet, refresher, discovery, teardown } = parts;
  const { sweepRedis, lease } = janitor;
  const controller = new AbortController();
  const boot = (async () => {
    const capabilities = await waitForRedis(
      sweepRedis,
      logger,
      controller.signal,
      undefined,
      (error) => explainRedisError(error, { url: config.redis.url, client: sweepRedis }),
      (problem) => parts.problems.saidRefusal(problem),
    );
    const server = await describeServer(sweepRedis).catch(() => undefined);
    const endpoint = maskRedisUrl(config.redis.url);
    const serverName = server === undefined ? "the server" : `${server.product} ${server.version}`;
    logger.info(
      { endpoint, server, mode: server?.mode, capabilities, groups: groupSet.current().length },
      `connected to ${serverName} at ${endpoint}${server === undefined ? "" : ` (${server.mode})`}`,
    );
    refresher.setCapabilities(capabilities);
    refresher.start();
    parts.sampler.setCapabilities(capabilities);
    parts.sampler.start();
    // Say at start-up, on every replica, which groups will be refused (each sweep re-checks).
    await janitor.reportRefusals(groupSet.current());
    // After the listed groups' check: discovered ones (thousands, maybe) are checked by sweeps.
    await discovery.start();
    if (controller.signal.aborted) return;
    const work = janitor.createSweepWork(parts.running(), groupSet, refresher);
    const { supervisor } = work;
    lease.on("acquired", () => supervisor.sweepSoon());
    // Pushed first, so it runs last: the sweep in flight ends before the lease is released.
    teardown.push("lease", () => lease.stop());
    parts.onSweepWork(work);
    teardown.push("supervisor", () => supervisor.stop());
    // Batches of redrive tasks run while leading, fenced like the sweeps; stopped before the lease.
    const { redriveTasks } = janitor;
    lease.on("acquired", () => redriveTasks.runSoon());
    teardown.push("redrive-tasks", () => redriveTasks.stop());
    lease.start();
    supervisor.start();
    redriveTasks.start();
  })();
  boot.catch((error: unknown) => {
    if (!controller.signal.aborted) parts.onFatal(error);
  });
  teardown.push("boot", async () => {
    controller.abort();
    await boot.catch(() => undefined);
  });
}
