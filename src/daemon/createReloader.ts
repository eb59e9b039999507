import type { Logger } from "pino";
import type { Gauge } from "prom-client";
import { checkHasWork } from "../config/checkHasWork.js";
import type { JanitorConfig } from "../core/configTypes.js";
import type { GroupSet } from "../core/GroupSet.js";
import type { Discovery } from "../discovery/Discovery.js";
import type { AdvisoryEvent } from "../events/EventWriter.js";
import { reloadProblems, settingsNeedingRestart } from "./configReload.js";
import type { Janitor, SweepWork } from "./createJanitor.js";

export interface ReloadTargets {
  logger: Logger;
  /** stream_janitor_config_last_reload_successful (see createReloadGauge). */
  gauge: Gauge;
  groupSet: GroupSet;
  discovery: Discovery;
  janitor: Pick<Janitor, "warnOutsideSlot" | "reportRefusals">;
  /** The sweep work once boot has built it (a reload may come before). */
  sweepWork: () => SweepWork | undefined;
  /** Writes an advisory event (the daemon writes it only while leading); fire-and-forget. */
  advise?: (event: AdvisoryEvent) => void;
}

/** A failed reload's event names at most this many problems (the log has them all). */
const MAX_EVENT_PROBLEMS = 20;

export interface Reloader {
  /** The configuration in effect: the start-up one, with every applied reload but restart-only keys. */
  readonly running: () => JanitorConfig;
  /** See RunningDaemon.reload. */
  readonly reload: (load: () => Promise<JanitorConfig>) => Promise<boolean>;
}

/**
 * SIGHUP: loads the configuration again and applies groups, sweep, retention and log settings
 * without touching the lease. A load that fails is logged with every problem and ignored.
 * Reloads run one at a time.
 */
export function createReloader(initial: JanitorConfig, targets: ReloadTargets): Reloader {
  const { logger, gauge } = targets;
  let running = initial;
  let reloading: Promise<boolean> = Promise.resolve(true);
  const reload = (load: () => Promise<JanitorConfig>): Promise<boolean> => {
    reloading = reloading.then(async () => {
      logger.info("SIGHUP: reloading the configuration");
      let next: JanitorConfig;
      try {
        next = await load();
        checkHasWork(next);
      } catch (error) {
        gauge.set(0);
        reportFailedReload(targets, error);
        return false;
      }
      running = applyReload(targets, running, next);
      gauge.set(1);
      return true;
    });
    return reloading;
  };
  return { running: () => running, reload };
}

/** Applies `next` over `running`; returns the configuration in effect from now on. */
function applyReload(
  targets: ReloadTargets,
  running: JanitorConfig,
  next: JanitorConfig,
): JanitorConfig {
  const { logger, groupSet, discovery, janitor } = targets;
  const restart = settingsNeedingRestart(running, next);
  if (restart.length > 0) {
    logger.warn(
      { keys: restart },
      `configuration reload: ${restart.join(", ")} changed; these take effect only after a restart`,
    );
  }
  logger.level = next.log.level;
  const work = targets.sweepWork();
  work?.supervisor.updateSettings(next.sweep);
  work?.maintenance.updateRetention(next.retention);
  const change = discovery.reconfigure(next);
  if (change !== undefined) {
    janitor.warnOutsideSlot([...change.added, ...change.updated]);
    void janitor.reportRefusals([...change.added, ...change.updated]);
  }
  const ids = (groups: readonly { id: string }[] | undefined): string[] =>
    groups?.map((group) => group.id) ?? [];
  const groups = groupSet.current().length;
  logger.info(
    {
      groups,
      added: ids(change?.added),
      removed: ids(change?.removed),
      updated: ids(change?.updated),
      logLevel: next.log.level,
    },
    "configuration reloaded",
  );
  targets.advise?.({
    type: "config-reloaded",
    count: groups,
    detail: {
      groups,
      added: change?.added.length ?? 0,
      removed: change?.removed.length ?? 0,
      updated: change?.updated.length ?? 0,
      restartNeeded: restart,
    },
  });
  // Retention (and later discovery) settings are read from the result at each use.
  return { ...next, redis: running.redis, lease: running.lease, http: running.http };
}

/** A load that failed: every problem logged, the first ones in an advisory event. */
function reportFailedReload(targets: ReloadTargets, error: unknown): void {
  const problems = reloadProblems(error);
  targets.logger.error(
    { problems },
    `configuration reload failed (${problems.length} problem${problems.length === 1 ? "" : "s"}); the running configuration stays in effect`,
  );
  targets.advise?.({
    type: "config-reload-failed",
    count: problems.length,
    detail: { problems: problems.slice(0, MAX_EVENT_PROBLEMS) },
  });
}
