import type { RedisClient } from "./scriptedRedis.js";

/** What the connected server can do, found out at start-up rather than assumed. */
export interface RedisCapabilities {
  version: string;
  /** 7.0+: XAUTOCLAIM reports the ids of deleted entries (and drops them from the PEL). */
  reportsDeletedIds: boolean;
  /** 7.0+: XINFO GROUPS has entries-read and lag. */
  groupLag: boolean;
  /** 7.2+: XINFO CONSUMERS has `inactive` (time since the last successful interaction). */
  consumerInactive: boolean;
}

export class UnsupportedRedisError extends Error {
  override name = "UnsupportedRedisError";
}

export function parseVersion(version: string): [number, number, number] {
  const [major = 0, minor = 0, patch = 0] = version
    .split(".")
    .map((part) => Number.parseInt(part, 10) || 0);
  return [major, minor, patch];
}

function atLeast(version: string, major: number, minor: number): boolean {
  const [a, b] = parseVersion(version);
  return a > major || (a === major && b >= minor);
}

export function capabilitiesOf(version: string): RedisCapabilities {
  return {
    version,
    reportsDeletedIds: atLeast(version, 7, 0),
    groupLag: atLeast(version, 7, 0),
    consumerInactive: atLeast(version, 7, 2),
  };
}

export async function detectCapabilities(redis: RedisClient): Promise<RedisCapabilities> {
  const info = await redis.info("server");
  const version = /^redis_version:(\S+)/mu.exec(info)?.[1];
  if (version === undefined)
    throw new UnsupportedRedisError("could not read redis_version from INFO server");
  const commandInfo = (await redis.call("COMMAND", "INFO", "XAUTOCLAIM")) as unknown[];
  const hasAutoClaim = Array.isArray(commandInfo) && commandInfo[0] !== null;
  if (!atLeast(version, 6, 2) || !hasAutoClaim) {
    throw new UnsupportedRedisError(
      `Redis ${version} is not supported: stream-janitor needs Redis >= 6.2 (XAUTOCLAIM)`,
    );
  }
  return capabilitiesOf(version);
}
