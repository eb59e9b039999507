import type { JanitorConfig } from "../core/configTypes.js";
import { formatEffectiveConfig } from "../config/formatEffectiveConfig.js";
import { discoverGroups } from "../discovery/discoverGroups.js";
import { createLogger } from "../logging/createLogger.js";
import { connectRedis, isCluster } from "../redis/connectRedis.js";
import { detectCapabilities } from "../redis/detectCapabilities.js";
import { explainRedisError } from "../redis/explainRedisError.js";
import { requireGroup } from "../redis/requireGroup.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { checkRequeueTarget } from "../sweep/checkRequeueTarget.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { classifySweepError } from "../sweep/sweepErrors.js";
import { slotRefusal } from "../core/slotRule.js";
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
  if (options.offline) return EXIT.ok;
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
    const refusals: string[] = [];
    for (const group of groups) {
      const refusal = await refusalOf(redis, group, isCluster(config.redis), explain);
      if (refusal !== undefined) refusals.push(refusal);
    }
    for (const refusal of refusals) say(refusal);
    if (refusals.length === 0) return EXIT.ok;
    say(`run would refuse or fail ${refusals.length} of ${groups.length} group(s)`);
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

/** Why run would not sweep this group, in the words run logs or a sweep reports; else undefined. */
async function refusalOf(
  redis: RedisClient,
  group: ResolvedGroup,
  cluster: boolean,
  explain: (error: unknown) => string,
): Promise<string | undefined> {
  try {
    // The order of sweepOnce: the slot rule (Cluster), the requeue target, then the group itself.
    const refusal =
      (cluster ? slotRefusal(group) : undefined) ?? (await checkRequeueTarget(redis, group));
    if (refusal !== undefined) return refusal;
    await requireGroup(redis, group.stream, group.group);
    return undefined;
  } catch (error) {
    const { kind, message } = classifySweepError(error);
    if (kind === "redis" || (kind === "script" && /^NOPERM/u.test(message))) {
      return `${group.id}: ${explain(error)}`;
    }
    // As sweepOnce words it: Redis' own errors do not always say which key they are about.
    return message.includes(group.stream) ? message : `${group.id}: ${message}`;
  }
}
