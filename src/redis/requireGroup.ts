import { findGroup, type GroupInfo } from "./replies.js";
import type { RedisClient } from "./RedisClient.js";
import { RedisError, redisErrorOf } from "./redisErrors.js";

/**
 * Checks that `stream` exists, is a stream and has `group`, with one body-free read
 * (`XINFO GROUPS`). Throws a RedisError coded NOSTREAM, WRONGTYPE or NOGROUP, so a typo in a
 * monitor-only group is a failed sweep instead of a silent success. Other errors (connection,
 * timeouts) are rethrown as they are.
 */
export async function requireGroup(
  redis: RedisClient,
  stream: string,
  group: string,
): Promise<GroupInfo> {
  const info = findGroup(await requireStream(redis, stream), group);
  if (info === undefined) {
    throw new RedisError("NOGROUP", `NOGROUP stream ${stream} has no group ${group}`);
  }
  return info;
}

/**
 * Checks that `stream` exists and is a stream (`XINFO GROUPS`), with the same errors as
 * requireGroup; resolves to the XINFO GROUPS reply.
 */
export async function requireStream(redis: RedisClient, stream: string): Promise<unknown> {
  try {
    return await redis.call("XINFO", "GROUPS", stream);
  } catch (error) {
    const answered = redisErrorOf(error);
    if (answered === undefined) throw error;
    switch (answered.code) {
      case "NOSUCHKEY":
        throw new RedisError("NOSTREAM", `NOSTREAM stream ${stream} does not exist`, {
          cause: error,
        });
      case "WRONGTYPE":
        throw new RedisError("WRONGTYPE", `WRONGTYPE key ${stream} is not a stream`, {
          cause: error,
        });
      default:
        throw error;
    }
  }
}
