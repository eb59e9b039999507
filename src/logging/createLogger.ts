import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger };

/**
 * Paths pino removes from every line. ioredis attaches the failed command's arguments to
 * errors, AUTH passwords included (ioredis #1229), so those go too; and an HTTP request's
 * Authorization header (http.auth's token or password), should a request ever be logged.
 */
const REDACTED_PATHS: readonly string[] = [
  "password",
  "*.password",
  "redis.password",
  "config.redis.password",
  "err.command.args",
  "error.command.args",
  "err.args",
  "error.args",
  "authorization",
  "headers.authorization",
  "req.headers.authorization",
  "request.headers.authorization",
];

/**
 * An Error with its stack and causes; anything else as given, so a line may carry an error in
 * brief (message and code: briefError) where a stack would say nothing to an operator.
 */
function serializeError(value: unknown): unknown {
  return value instanceof Error ? pino.stdSerializers.err(value) : value;
}

/** One root logger per process; components take `logger.child({ component })`. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { name: "stream-janitor" },
    redact: { paths: [...REDACTED_PATHS], censor: "[redacted]" },
    serializers: { err: serializeError, error: serializeError },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
