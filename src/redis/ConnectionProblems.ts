import type { Logger } from "pino";
import { explainRedisError } from "./explainRedisError.js";
import { isReplyError } from "./replies.js";

/** The retry delay ioredis writes into its Sentinel errors: it does not make a new problem. */
const RETRY_DELAY = /\bafter \d+ms\b/gu;

/** An error as a log field without its stack: where ioredis failed says nothing to an operator. */
export function briefError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const { code } = error as { code?: unknown };
  return { type: error.name, message: error.message, ...(code === undefined ? {} : { code }) };
}

/**
 * A process' connection trouble, said once per change of state whatever the number of its
 * connections and retries: each connection reports its errors and its readiness here. An error
 * Redis answered (WRONGPASS, NOPERM) is a refusal: it is logged in its own words ("authentication
 * failed at host:port (WRONGPASS): check ..."), so an operator reads the cause, not a symptom.
 */
export class ConnectionProblems {
  private problem: string | undefined;
  private refusal = false;
  private readonly failing = new Set<string>();

  constructor(
    private readonly logger: Logger,
    private readonly url: string,
  ) {}

  /** True when this refusal is the problem logged now: the start-up wait need not repeat it. */
  saidRefusal(problem: string): boolean {
    return this.refusal && this.problem === problem;
  }

  /**
   * Records a connection error; logs it when the process' problem changes. `fallback` is the
   * line a connection that Redis did not answer (refused, TLS) logs, as it always has.
   */
  failed(
    connection: string,
    error: Error,
    client: object,
    fallback: { msg: string; fields?: object },
  ): void {
    this.failing.add(connection);
    const explained = explainRedisError(error, { url: this.url, client });
    const key = explained.replace(RETRY_DELAY, "after <delay>");
    if (key === this.problem) return;
    this.problem = key;
    const refused = isReplyError(error);
    this.refusal = refused;
    this.logger.warn(
      { connection, err: briefError(error), problem: explained, ...fallback.fields },
      refused ? `${explained}; retrying` : fallback.msg,
    );
  }

  /** A connection is ready: once every failing one is, the end of the problem is logged once. */
  ready(connection: string): void {
    if (!this.failing.delete(connection) || this.failing.size > 0) return;
    if (this.problem === undefined) return;
    this.problem = undefined;
    this.refusal = false;
    this.logger.info({ connection }, "redis connection restored");
  }
}
