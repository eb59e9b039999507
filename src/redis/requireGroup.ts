import { classifyReplyError, findGroup, isReplyError, type GroupInfo } from "./replies.js";
import type { RedisClient } from "./RedisClient.js";

/**
 * Checks that `stream` exists, is a stream and has `group`, with one body-free read
 * (`XINFO GROUPS`). Throws an error whose message starts with the code the sweep classifies
 * (NOSTREAM, WRONGTYPE, NOGROUP), so a typo in a monitor-only group is a failed sweep instead of
 * a silent success. Other errors (connection, timeouts) are rethrown as they are.
 */
export async function requireGroup(
  redis: RedisClient,
  stream: string,
  group: string,
): Promise<GroupInfo> {
  const info = findGroup(await requireStream(redis, stream), group);
  if (info === undefined) throw new Error(`NOGROUP stream ${stream} has no group ${group}`);
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
    if (!(error instanceof Error) || !isReplyError(error)) throw error;
    switch (classifyReplyError(error)) {
      case "no-stream":
        throw new Error(`NOSTREAM stream ${stream} does not exist`, { cause: error });
      case "wrong-type":
        throw new Error(`WRONGTYPE key ${stream} is not a stream`, { cause: error });
      default:
        throw error;
    }
  }
}
