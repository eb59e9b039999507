import type { Logger } from "pino";
import type { JanitorConfig } from "../core/configTypes.js";
import type { RunningDaemon } from "../daemon/startDaemon.js";
import { EXIT } from "./exitCodes.js";

/** Under Kubernetes' default 30 s grace period, so we finish before SIGKILL arrives. */
const GRACEFUL_STOP_MS = 25_000;

/**
 * The process-level side of `run`: the first SIGTERM/SIGINT stops the daemon gracefully (a
 * second, or the grace period running out, forces the exit), SIGHUP reloads the configuration,
 * and an error nobody caught exits at once.
 */
export class DaemonSignals {
  /** The daemon once started (undefined if it could not start); stop() and reload() go to it. */
  daemon: Promise<RunningDaemon | undefined> = Promise.resolve(undefined);
  private stopping = false;

  constructor(
    private readonly logger: Logger,
    /** Called once the graceful stop is over, with the exit code. */
    private readonly finish: (code: number) => void,
  ) {}

  /** Installs the handlers; without `reload`, SIGHUP is logged and ignored. */
  install(reload: (() => Promise<JanitorConfig>) | undefined): void {
    const { logger } = this;
    process.on("SIGTERM", () => this.shutdown("SIGTERM", EXIT.ok));
    process.on("SIGINT", () => this.shutdown("SIGINT", EXIT.ok));
    // Without a handler SIGHUP would kill the process and leave the lease held for its TTL.
    process.on("SIGHUP", () => {
      if (this.stopping) return;
      if (reload === undefined) {
        logger.warn("SIGHUP ignored: no configuration source to reload from");
        return;
      }
      void this.daemon.then((running) => running?.reload(reload));
    });
    process.on("uncaughtException", (error) => {
      logger.fatal({ err: error }, "uncaught exception");
      process.exit(EXIT.failure);
    });
    process.on("unhandledRejection", (error) => {
      logger.fatal({ err: error }, "unhandled promise rejection");
      process.exit(EXIT.failure);
    });
  }

  /** Stops the daemon gracefully, then finishes with `code`; a second call exits now. */
  shutdown(reason: string, code: number): void {
    const { logger } = this;
    if (this.stopping) {
      logger.warn({ reason }, "second stop request: exiting now");
      process.exit(code === EXIT.ok ? EXIT.failure : code);
    }
    this.stopping = true;
    logger.info({ reason }, "stopping");
    const force = setTimeout(() => {
      logger.error({ graceMs: GRACEFUL_STOP_MS }, "graceful stop took too long: exiting now");
      process.exit(EXIT.failure);
    }, GRACEFUL_STOP_MS);
    force.unref();
    void this.daemon
      .then((running) => running?.stop())
      .catch((error: unknown) => logger.error({ err: error }, "error while stopping"))
      .finally(() => {
        clearTimeout(force);
        logger.info("stopped");
        this.finish(code);
      });
  }
}
