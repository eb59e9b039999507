import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Redis } from "ioredis";
import type { GroupConfig } from "../../src/core/configTypes.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import type { PageRequest, PageResult } from "../../src/scripts/sweepPage.js";
import type { ScriptedRedis } from "../../src/scripts/scriptedRedis.js";
import type { Violation } from "./checker.js";
import { MIN_IDLE_MS, type ChaosGroup } from "./groups.js";
import { LEASE_KEY } from "./servers.js";

/** The modules of the build under test (dist/, or a planted copy), loaded from its folder. */
interface Build {
  registerScripts: (redis: Redis) => ScriptedRedis;
  runSweepPage: (redis: ScriptedRedis, request: PageRequest) => Promise<PageResult>;
  resolveGroup: (group: GroupConfig) => ResolvedGroup;
  defaultGroupConfig: (stream: string, group: string) => GroupConfig;
}

async function loadBuild(cli: string): Promise<Build> {
  const load = (path: string) => import(pathToFileURL(join(dirname(cli), path)).href);
  return {
    ...((await load("scripts/scriptedRedis.js")) as Pick<Build, "registerScripts">),
    ...((await load("scripts/sweepPage.js")) as Pick<Build, "runSweepPage">),
    ...((await load("core/resolveGroup.js")) as Pick<Build, "resolveGroup">),
    ...((await load("config/defaultConfig.js")) as Pick<Build, "defaultGroupConfig">),
  };
}

/**
 * A stale leader, simulated: one call of the build's own sweep script for `group` with a lease
 * value that is not the lease's (a janitor paused past its TTL holds exactly that). The script
 * must refuse it (FENCED) before any write; a reply means it ran, and could have written. On
 * Redis Cluster (`cluster`) the fence is the stream's slot fence, and the stale leader's fencing
 * token 0, below that of every term that swept the stream since the janitors started.
 */
export async function probeFence(
  cli: string,
  connect: () => Redis,
  group: ChaosGroup,
  cluster = false,
): Promise<Violation[]> {
  const build = await loadBuild(cli);
  const client = connect(); // a refused call is reported by the call itself
  const redis = build.registerScripts(client);
  const config: GroupConfig = {
    ...build.defaultGroupConfig(group.stream, group.group),
    action: group.action,
    minIdleMs: MIN_IDLE_MS,
    maxDeliveries: group.maxDeliveries,
    deadLetterStream: group.deadLetters,
    retryLane: group.lane !== undefined,
  };
  const request: PageRequest = {
    group: build.resolveGroup(config),
    janitorConsumer: "stream-janitor",
    cursor: "0-0",
    maxClaimed: 10,
    maxExamined: 100,
    firstWindow: 10,
    budgetMs: 2,
    rotation: 0,
    fence: {
      key: LEASE_KEY,
      value: "chaos:a-stale-lease-value",
      ...(cluster ? { slotToken: 0 } : {}),
    },
  };
  try {
    const result = await build.runSweepPage(redis, request);
    const detail = `a sweep of ${group.stream}/${group.group} with a stale lease value ran (examined ${result.examined}, claimed ${result.claimed})`;
    return [{ invariant: "fence-not-held", detail }];
  } catch (error) {
    if (String(error).includes("FENCED")) return [];
    return [{ invariant: "fence-probe-failed", detail: String(error) }];
  } finally {
    redis.disconnect();
  }
}
