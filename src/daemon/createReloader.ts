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
  const { logger, gauge, groupSet, discovery, janitor } = targets;
  let running = initial;

  const apply = (next: JanitorConfig): void => {
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
    targets.advise?.({
      type: "config-reloaded",
      count: groupSet.current().length,
      detail: {
        groups: groupSet.current().length,
        added: change?.added.length ?? 0,
        removed: change?.removed.length ?? 0,
        updated: change?.updated.length ?? 0,
        restartNeeded: restart,
      },
    });
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
        gauge.set(0);
        const problems = reloadProblems(error);
        logger.error(
          { problems },
          `configuration reload failed (${problems.length} problem${problems.length === 1 ? "" : "s"}); the running configuration stays in effect`,
        );
        targets.advise?.({
          type: "config-reload-failed",
          count: problems.length,
          detail: { problems: problems.slice(0, MAX_EVENT_PROBLEMS) },
        });
        return false;
      }
      apply(next);
      gauge.set(1);
      return true;
    });
    return reloading;
  };

  return { running: () => running, reload };
}
