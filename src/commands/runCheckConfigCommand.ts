import type { JanitorConfig } from "../core/configTypes.js";
import { formatEffectiveConfig } from "../config/formatEffectiveConfig.js";
import { discoverGroups } from "../discovery/discoverGroups.js";
import { createLogger } from "../logging/createLogger.js";
import { connectRedis, isCluster } from "../redis/connectRedis.js";
import { detectCapabilities } from "../redis/detectCapabilities.js";
import { endpointOf, explainRedisError } from "../redis/explainRedisError.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { listRefusals } from "./checkConfigRefusals.js";
import { describeRedisFailure } from "./describeRedisFailure.js";
import { EXIT } from "./exitCodes.js";
import type { Interruption } from "./Interruption.js";

/** A check-config command waits this long for one reply. */
const COMMAND_TIMEOUT_MS = 10_000;

/**
 * `check-config`: prints the effective configuration; then, unless --offline, asks Redis what
 * `run` would find there and reports every refusal `run` would make, with run's own code and
 * words: the server (version, ACL), missing streams and groups (as a sweep reports them),
 * requeue targets read by other groups, and on Cluster discovered groups whose keys span two
 * hash slots (listed ones were refused by loadConfig already, exit 78).
 */
export async function runCheckConfigCommand(
  config: JanitorConfig,
  options: { offline: boolean; interruption: Interruption },
): Promise<number> {
  process.stdout.write(`${formatEffectiveConfig(config)}\n`);
  if (options.offline) {
    sayOk("the file is valid (Redis not asked: --offline)");
    return EXIT.ok;
  }
  // Connection trouble is reported once, below, in words: no log lines.
  const redis = connectRedis(config.redis, {
    connectionName: "stream-janitor:check-config",
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    logger: createLogger("silent"),
    failFast: true,
  });
  const say = (line: string): void =>
    void process.stderr.write(`stream-janitor check-config: ${line}\n`);
  const context = { url: config.redis.url, client: redis };
  const explain = (error: unknown): string => explainRedisError(error, context);
  const checking = (async (): Promise<number> => {
    try {
      await detectCapabilities(redis);
    } catch (error) {
      const line = describeRedisFailure(error, { ...context, reached: false });
      say(line);
      if (line.startsWith("cannot reach")) {
        say("to validate the file alone, without Redis: stream-janitor check-config --offline");
      }
      return EXIT.failure;
    }
    let groups: ResolvedGroup[];
    try {
      groups = await discoverGroups(redis, config);
    } catch (error) {
      say(`discovery failed: ${explain(error)}`);
      return EXIT.failure;
    }
    const { lines, refused } = await listRefusals(redis, groups, isCluster(config.redis), explain);
    for (const line of lines) say(line);
    if (refused === 0) {
      sayOk(
        `run would sweep ${groups.length} group(s) at ${endpointOf(config.redis.url)} and refuse none`,
      );
      return EXIT.ok;
    }
    say(`run would refuse or fail ${refused} of ${groups.length} group(s)`);
    return EXIT.failure;
  })();
  try {
    return await Promise.race([
      checking,
      options.interruption.whenInterrupted().then(() => EXIT.failure),
    ]);
  } finally {
    checking.catch(() => undefined);
    redis.disconnect();
  }
}

/**
 * The closing "ok" line, for an operator at a terminal: piped, an empty stderr and exit 0 say it
 * (scripts read the configuration on stdout).
 */
function sayOk(summary: string): void {
  if (process.stderr.isTTY) process.stderr.write(`stream-janitor check-config: ok: ${summary}\n`);
}
