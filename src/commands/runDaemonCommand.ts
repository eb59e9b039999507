import type { JanitorConfig } from "../core/configTypes.js";
import type { UiActionRunnerFactory } from "../daemon/consoleActions.js";
import { startDaemon, type RunningDaemon } from "../daemon/startDaemon.js";
import { createLogger } from "../logging/createLogger.js";
import { HttpListenError } from "../http/createHttpServer.js";
import { EXIT } from "./exitCodes.js";
import { readVersion } from "./readVersion.js";

/** Under Kubernetes' default 30 s grace period, so we finish before SIGKILL arrives. */
const GRACEFUL_STOP_MS = 25_000;

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
  let daemon: Promise<RunningDaemon | undefined> = Promise.resolve(undefined);
  let stopping = false;

  const shutdown = (reason: string, code: number): void => {
    if (stopping) {
      logger.warn({ reason }, "second stop request: exiting now");
      process.exit(code === EXIT.ok ? EXIT.failure : code);
    }
    stopping = true;
    logger.info({ reason }, "stopping");
    const force = setTimeout(() => {
      logger.error({ graceMs: GRACEFUL_STOP_MS }, "graceful stop took too long: exiting now");
      process.exit(EXIT.failure);
    }, GRACEFUL_STOP_MS);
    force.unref();
    void daemon
      .then((running) => running?.stop())
      .catch((error: unknown) => logger.error({ err: error }, "error while stopping"))
      .finally(() => {
        clearTimeout(force);
        logger.info("stopped");
        finish(code);
      });
  };
  process.on("SIGTERM", () => shutdown("SIGTERM", EXIT.ok));
  process.on("SIGINT", () => shutdown("SIGINT", EXIT.ok));
  // Without a handler SIGHUP would kill the process and leave the lease held for its TTL.
  const { reload } = options;
  process.on("SIGHUP", () => {
    if (stopping) return;
    if (reload === undefined) {
      logger.warn("SIGHUP ignored: no configuration source to reload from");
      return;
    }
    void daemon.then((running) => running?.reload(reload));
  });
  process.on("uncaughtException", (error) => {
    logger.fatal({ err: error }, "uncaught exception");
    process.exit(EXIT.failure);
  });
  process.on("unhandledRejection", (error) => {
    logger.fatal({ err: error }, "unhandled promise rejection");
    process.exit(EXIT.failure);
  });

  const uiActions = await loadUiActions(config);
  const starting = startDaemon(config, {
    logger,
    version,
    ...(uiActions !== undefined && { uiActions }),
    onFatal: (error) => {
      logger.fatal({ err: error }, "cannot continue");
      shutdown("fatal", EXIT.failure);
    },
  });
  daemon = starting.catch(() => undefined);
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
