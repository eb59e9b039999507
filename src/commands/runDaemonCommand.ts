import type { JanitorConfig } from "../core/configTypes.js";
import type { UiActionRunnerFactory } from "../daemon/consoleActions.js";
import { startDaemon, type RunningDaemon } from "../daemon/startDaemon.js";
import { createLogger } from "../logging/createLogger.js";
import { HttpListenError } from "../http/createHttpServer.js";
import { DaemonSignals } from "./daemonSignals.js";
import { EXIT } from "./exitCodes.js";
import { readVersion } from "./readVersion.js";

/**
 * `stream-janitor run`: starts the daemon and owns the process-level concerns: signals (the
 * first SIGTERM/SIGINT stops gracefully, a second forces the exit; SIGHUP reloads the
 * configuration), and errors nobody caught.
 */
export async function runDaemonCommand(
  config: JanitorConfig,
  options: { reload?: () => Promise<JanitorConfig> } = {},
): Promise<number> {
  const logger = createLogger(config.log.level);
  const version = readVersion();
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const signals = new DaemonSignals(logger, finish);
  signals.install(options.reload);

  const uiActions = await loadUiActions(config);
  const starting = startDaemon(config, {
    logger,
    version,
    ...(uiActions !== undefined && { uiActions }),
    onFatal: (error) => {
      logger.fatal({ err: error }, "cannot continue");
      signals.shutdown("fatal", EXIT.failure);
    },
  });
  signals.daemon = starting.catch(() => undefined);
  let running: RunningDaemon;
  try {
    running = await starting;
  } catch (error) {
    if (!(error instanceof HttpListenError)) throw error;
    // One clear line, no stack trace: the operator's fix is a setting.
    logger.fatal({ code: error.code }, error.message);
    process.stderr.write(`stream-janitor: ${error.message}\n`);
    return EXIT.failure;
  }
  logger.info(
    { version, http: running.httpUrl, groups: config.groups.length },
    "stream-janitor running",
  );
  return finished;
}

/** Loaded only when the console may act: `run` otherwise loads none of the operator code. */
async function loadUiActions(config: JanitorConfig): Promise<UiActionRunnerFactory | undefined> {
  if (config.http.ui.actions !== true) return undefined;
  const { createUiActionRunner } = await import("../operations/uiActionRunner.js");
  return (redis) => createUiActionRunner(redis, config);
}
