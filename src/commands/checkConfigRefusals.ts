import { nearestName } from "../core/nearestName.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { slotRefusal } from "../core/slotRule.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { parseXinfoGroupNames } from "../redis/replies.js";
import { requireGroup, requireStream } from "../redis/requireGroup.js";
import { checkRequeueTarget } from "../sweep/checkRequeueTarget.js";
import { classifySweepError } from "../sweep/sweepErrors.js";

interface Refusal {
  line: string;
  /** Set when the group's stream does not exist: said once for all its groups. */
  missingStream?: string;
}

/**
 * Every refusal run would make, one line each, in run's words: a missing stream once for all
 * the groups configured on it (naming them), a missing group with the stream's groups and the
 * nearest of them. `refused` counts groups.
 */
export async function listRefusals(
  redis: RedisClient,
  groups: readonly ResolvedGroup[],
  cluster: boolean,
  explain: (error: unknown) => string,
): Promise<{ lines: string[]; refused: number }> {
  // In the order found; a missing stream keeps the place of its first group.
  const found: { line: string; groups?: string[] }[] = [];
  const missing = new Map<string, string[]>();
  let refused = 0;
  for (const group of groups) {
    const refusal = await refusalOf(redis, group, cluster, explain);
    if (refusal === undefined) continue;
    refused += 1;
    if (refusal.missingStream === undefined) {
      found.push({ line: refusal.line });
      continue;
    }
    const names = missing.get(refusal.missingStream);
    if (names !== undefined) names.push(group.group);
    else {
      const first = [group.group];
      missing.set(refusal.missingStream, first);
      found.push({ line: refusal.line, groups: first });
    }
  }
  const lines = found.map(({ line, groups: names }) =>
    names === undefined ? line : `${line} (configured for groups ${names.join(", ")})`,
  );
  return { lines, refused };
}

/** Why run would not sweep this group, in the words run logs or a sweep reports; else undefined. */
async function refusalOf(
  redis: RedisClient,
  group: ResolvedGroup,
  cluster: boolean,
  explain: (error: unknown) => string,
): Promise<Refusal | undefined> {
  try {
    // The order of sweepOnce: the slot rule (Cluster), the requeue target, then the group itself.
    const refusal =
      (cluster ? slotRefusal(group) : undefined) ?? (await checkRequeueTarget(redis, group));
    if (refusal !== undefined) return { line: refusal };
    await requireGroup(redis, group.stream, group.group);
    return undefined;
  } catch (error) {
    const { kind, message } = classifySweepError(error);
    if (kind === "redis" || (kind === "script" && /^NOPERM/u.test(message))) {
      return { line: `${group.id}: ${explain(error)}` };
    }
    const code = (error as { code?: unknown }).code;
    if (code === "NOSTREAM" && message.includes(`stream ${group.stream} does not exist`)) {
      return { line: message, missingStream: group.stream };
    }
    if (code === "NOGROUP") return { line: await withGroupsOfStream(redis, group, message) };
    // As sweepOnce words it: Redis' own errors do not always say which key they are about.
    return { line: message.includes(group.stream) ? message : `${group.id}: ${message}` };
  }
}

/** "stream S has no group G; did you mean H? (groups on stream S: H, K)". */
async function withGroupsOfStream(
  redis: RedisClient,
  group: ResolvedGroup,
  message: string,
): Promise<string> {
  const names = await requireStream(redis, group.stream)
    .then(parseXinfoGroupNames)
    .catch(() => undefined);
  if (names === undefined) return message;
  if (names.length === 0) return `${message} (stream ${group.stream} has no groups)`;
  const near = nearestName(group.group, names);
  const hint = near === undefined ? "" : `; did you mean ${near}?`;
  return `${message}${hint} (groups on stream ${group.stream}: ${names.join(", ")})`;
}
