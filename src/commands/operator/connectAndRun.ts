import { ConfigError } from "../../config/ConfigError.js";
import { loadConfig } from "../../config/loadConfig.js";
import { silentLogger } from "../../logging/silentLogger.js";
import { connectRedis } from "../../redis/connectRedis.js";
import { registerScripts } from "../../scripts/scriptedRedis.js";
import { describeRedisFailure } from "../describeRedisFailure.js";
import { EXIT } from "../exitCodes.js";
import type { Interruption } from "../Interruption.js";
import { requireConfigSource } from "../requireConfigSource.js";
import { OperatorFailure, type OperatorCommand } from "./OperatorCommand.js";
import { UsageError, type OptionValues } from "../Command.js";

/** A Redis command may take this long; a page script is bounded to milliseconds. */
const COMMAND_TIMEOUT_MS = 30_000;

/**
 * A connection that never came up says why (unreachable, authentication) and nothing else; a
 * failure after that is "failed: " and the error, in the operator's words where it is Redis'.
 */
function failureLine(error: unknown, context: Parameters<typeof describeRedisFailure>[1]): string {
  const line = describeRedisFailure(error, context);
  return context.reached ? `failed: ${line}` : line;
}

/**
 * An operator command whose options are checked: loads the configuration, connects, runs the
 * command and maps its outcome to an exit code (78 bad configuration, 2 usage, 1 failure).
 */
export async function connectAndRun(
  command: OperatorCommand,
  values: OptionValues,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WriteStream },
  interruption: Interruption,
): Promise<number> {
  let config;
  try {
    const configPath = typeof values.config === "string" ? values.config : undefined;
    requireConfigSource(configPath, process.env);
    config = await loadConfig({ configPath, env: process.env });
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`stream-janitor: ${error.message}\n`);
      return EXIT.config;
    }
    throw error;
  }
  // Connection trouble is said once, in words, when it fails the command: no log lines.
  const redis = registerScripts(
    connectRedis(config.redis, {
      connectionName: `stream-janitor:${command.words.join("-")}`,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      logger: silentLogger,
    }),
  );
  let reached = false;
  redis.once("ready", () => (reached = true));
  const session = { config, redis, stdout: io.stdout, stderr: io.stderr };
  const running = command.run(values, { ...session, signal: interruption.signal });
  try {
    if (command.stopsOnSignal === true) return await running;
    // Nothing to stop at a page boundary: a signal ends the wait (for Redis, say) now.
    return await Promise.race([running, interruption.whenInterrupted().then(() => EXIT.failure)]);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`stream-janitor ${command.words.join(" ")}: ${error.message}\n`);
      return EXIT.usage;
    }
    const line =
      error instanceof OperatorFailure
        ? error.message
        : failureLine(error, { url: config.redis.url, client: redis, reached });
    io.stderr.write(`stream-janitor ${command.words.join(" ")}: ${line}\n`);
    return EXIT.failure;
  } finally {
    running.catch(() => undefined);
    redis.disconnect();
  }
}
