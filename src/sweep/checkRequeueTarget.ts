import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { parseXinfoGroupNames } from "../redis/replies.js";

/**
 * A requeued copy is delivered to every group that reads the target stream. Returns why the
 * group must be refused (other groups would receive duplicates), or undefined when it is safe.
 */
export async function checkRequeueTarget(
  redis: RedisClient,
  group: ResolvedGroup,
): Promise<string | undefined> {
  if (group.action !== "requeue") return undefined;
  let names: string[];
  try {
    names = parseXinfoGroupNames(await redis.call("XINFO", "GROUPS", group.requeueStream));
  } catch (error) {
    // No target stream yet: nobody else can read the copies (XADD creates it with no groups).
    if (error instanceof Error && /no such key/iu.test(error.message)) return undefined;
    throw error;
  }
  const others =
    group.requeueStream === group.stream
      ? names.filter((name) => name !== group.group)
      : names.length > 1
        ? names
        : [];
  if (others.length === 0) return undefined;
  return (
    `refusing to requeue ${group.id}: requeue stream ${group.requeueStream} is also read by ` +
    `group(s) ${others.join(", ")}, which would receive duplicate copies; give the group its own ` +
    `requeueStream or use action reassign`
  );
}
