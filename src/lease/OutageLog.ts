import type { Logger } from "pino";
import { briefError } from "../redis/ConnectionProblems.js";

/**
 * Logs failed lease commands at warn once when Redis starts failing, then at debug while it stays
 * down (a standby retries every retryPeriodMs), and once at info when it answers again.
 */
export class OutageLog {
  private failing = false;
  private readonly log: Logger;

  constructor(log: Logger) {
    this.log = log;
  }

  failed(error: unknown, operation: string, extra: object = {}): void {
    // No stack: where ioredis failed says nothing to an operator; the message and code do.
    const fields = { err: briefError(error), operation, ...extra };
    if (this.failing) this.log.debug(fields, "lease command failed");
    else this.log.warn(fields, "lease command failed");
    this.failing = true;
  }

  succeeded(): void {
    if (this.failing) this.log.info("lease commands succeed again");
    this.failing = false;
  }
}
