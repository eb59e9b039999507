import type { GroupAction } from "../config/types.js";
import type { Fence } from "../lease/types.js";
import type { ScriptedRedis } from "../redis/scriptedRedis.js";
import type { ResolvedGroup } from "./resolveGroup.js";
import { fenceArguments } from "./slotFence.js";

export interface PageRequest {
  group: ResolvedGroup;
  janitorConsumer: string;
  cursor: string;
  pageSize: number;
  reassignCandidates: readonly string[];
  fence: Fence | undefined;
}

export interface PageResult {
  nextCursor: string;
  examined: number;
  claimed: number;
  requeued: number;
  reassigned: number;
  deadLetteredMaxDeliveries: number;
  deadLetteredAction: number;
  leftPending: number;
  ghostIds: string[];
  /** Entries with too many fields to copy inside one script call; left pending untouched. */
  oversizedIds: string[];
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

export function parsePageReply(reply: unknown): PageResult {
  if (!Array.isArray(reply) || reply.length < 10) {
    throw new Error(`unexpected sweepPage reply: ${JSON.stringify(reply)}`);
  }
  const numbers = reply.slice(1, 8).map(Number);
  const [examined, claimed, requeued, reassigned, maxDeliveries, action, leftPending] = numbers;
  return {
    nextCursor: String(reply[0]),
    examined: examined ?? 0,
    claimed: claimed ?? 0,
    requeued: requeued ?? 0,
    reassigned: reassigned ?? 0,
    deadLetteredMaxDeliveries: maxDeliveries ?? 0,
    deadLetteredAction: action ?? 0,
    leftPending: leftPending ?? 0,
    ghostIds: asStrings(reply[8]),
    oversizedIds: asStrings(reply[9]),
  };
}

/** The script's action argument: monitor groups never reach the script. */
function scriptAction(action: GroupAction): string {
  return action === "monitor" ? "requeue" : action;
}

/** Runs one page of the sweep as one atomic script call (see scripts/sweepPage.lua). */
export async function runSweepPage(
  redis: ScriptedRedis,
  request: PageRequest,
): Promise<PageResult> {
  const { group, fence } = request;
  const keys = [group.stream, group.requeueStream, group.deadLetterStream];
  const fenceArgs = fence === undefined ? undefined : fenceArguments(fence, group.stream);
  if (fenceArgs !== undefined) keys.push(fenceArgs.key);
  const reply = await redis.sjSweepPage(
    keys.length,
    ...keys,
    group.group,
    request.janitorConsumer,
    group.minIdleMs,
    request.cursor,
    request.pageSize,
    group.maxDeliveries,
    scriptAction(group.action),
    group.deadLetterMaxLen,
    fenceArgs?.value ?? "",
    request.reassignCandidates.length,
    ...request.reassignCandidates,
  );
  return parsePageReply(reply);
}
