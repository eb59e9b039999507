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

/** One root logger per process; components take `logger.child({ component })`. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { name: "stream-janitor" },
    redact: { paths: [...REDACTED_PATHS], censor: "[redacted]" },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
