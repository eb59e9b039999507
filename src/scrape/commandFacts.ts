import {
  asArray,
  kvList,
  parsePendingPage,
  parseXinfoGroups,
  type GroupInfo,
} from "../redis/replies.js";
import type { PipelineReply } from "../redis/pipeline/runPipeline.js";
import type { ActivityFacts, LaneFacts } from "../scripts/readGroupStatsParts.js";

/*
 * The facts of the reply model (src/scripts/readGroupStatsParts.ts) from the replies of plain
 * commands: what readGroupStats.lua gathers in a script, gathered by readGroupCommands.ts.
 */

/** The lane's facts from its XINFO GROUPS and XPENDING replies. */
export function laneFactsOf(name: string, groups: PipelineReply, oldest: PipelineReply): LaneFacts {
  if (groups.error) return { error: groups.error.message, group: undefined, oldest: undefined };
  const info = parseXinfoGroups(groups.value).find((group) => group.name === name);
  const [first] = oldest.error ? [] : parsePendingPage(oldest.value);
  return { error: undefined, group: info, oldest: first };
}

/** The activity's facts from XINFO CONSUMERS and the touches hash (unreadable: no touches). */
export function activityFactsOf(
  info: GroupInfo,
  consumers: unknown,
  touches: PipelineReply | undefined,
): ActivityFacts {
  const idles: [string, number][] = [];
  for (const entry of asArray(consumers, "XINFO CONSUMERS")) {
    const fields = kvList(entry, "XINFO CONSUMERS");
    const idle = Number(fields.get("idle"));
    if (Number.isFinite(idle)) idles.push([String(fields.get("name")), idle]);
  }
  const flat = touches === undefined || touches.error ? [] : asArray(touches.value, "HGETALL");
  const byName = new Map<string, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) byName.set(String(flat[i]), Number(flat[i + 1]));
  return { entriesRead: info.entriesRead, idles, touches: byName };
}
