import type { GroupAction } from "../core/configTypes.js";
import type { Fence } from "../core/fence.js";
import { callScript, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";
import type { RedisErrorCode } from "../redis/redisErrors.js";
import { carriedCountsKey, type ResolvedGroup } from "../core/resolveGroup.js";
import { fenceArguments } from "../core/fence.js";
import { backoffPolicy } from "../core/backoffThreshold.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import { ScriptReplyError } from "./scriptReplies.js";

/**
 * The interface of src/scripts/lua/sweepPage.lua, in one place: the typed request, the
 * builder of its KEYS and ARGV (name/value pairs), and the named result parsed from its reply.
 */
export interface PageRequest {
  group: ResolvedGroup;
  janitorConsumer: string;
  /** First PEL id to look at, inclusive; 0-0 to start. */
  cursor: string;
  /** At most this many entries are claimed by the call. */
  maxClaimed: number;
  /** At most this many PEL entries are looked at by the call. */
  maxExamined: number;
  /** Size of the call's first PEL window; later windows follow the cost the call measures. */
  firstWindow: number;
  /** The call starts no new window once it has run this long. */
  budgetMs: number;
  /** Round-robin offset among reassign candidates. */
  rotation: number;
  fence: Fence | undefined;
  /**
   * Set to sweep the group's retry lane instead of its source: the lane's PEL, requeued into the
   * lane, dead letters naming the source stream. The fence stays the source's (same slot).
   */
  lane?: string;
}

export interface PageResult {
  /** Where the next call starts; 0-0 once the PEL wrapped. */
  nextCursor: string;
  examined: number;
  claimed: number;
  requeued: number;
  reassigned: number;
  deadLetteredMaxDeliveries: number;
  deadLetteredAction: number;
  /** Dead-lettered because they idled past the group's deadLetterAfterIdleMs. */
  deadLetteredMaxIdle: number;
  leftPending: number;
  /** Claimed entries whose owner read from the group within minIdleMs (minIdleMs too low?). */
  claimedFromActiveConsumer: number;
  /** How far the round-robin over reassign candidates moved. */
  handedOff: number;
  windows: number;
  /** The call's own duration, from Redis TIME inside the script. */
  durationMs: number;
  /** Of which claiming and handling entries (the rest went into reading the PEL). */
  claimMs: number;
  ghostIds: string[];
  /** Entries with too many fields to copy inside one script call; left pending untouched. */
  oversizedIds: string[];
  /** Entries whose x-delivery-count was not a canonical integer: the first ids, and the total. */
  invalidCountIds: string[];
  invalidCounts: number;
  /** The first ids (at most MAX_REPORTED_IDS, in PEL order) each action handled in the call. */
  requeuedIds: string[];
  reassignedIds: string[];
  /** For every reason. */
  deadLetteredIds: string[];
  /** Dead letters that the group's deadLetterMaxLen removed during the call (0 when uncapped). */
  deadLettersDropped: number;
  /** The group's dead-letter index was complete and kept (false: it needs building first). */
  deadLetterIndexed: boolean;
  /** Set when an unforeseen error stopped the call: what was done is counted, the rest untouched. */
  error?: string;
}

/**
 * The script's refusals, each before anything changed (NOGROUP is Redis' own, passed on); the
 * sweep reports them by kind (SWEEP_ERROR_CODES in src/sweep/sweepErrors.ts).
 */
export const SWEEP_PAGE_ERRORS = [
  "FENCED",
  "NOSTREAM",
  "WRONGTYPE",
  "NOGROUP",
  "IDSEXHAUSTED",
  "CONSUMERBUSY",
] as const satisfies readonly RedisErrorCode[];

export type SweepPageError = (typeof SWEEP_PAGE_ERRORS)[number];

/** The script's action argument: monitor groups never reach the script. */
function scriptAction(action: GroupAction): string {
  return action === "monitor" ? "requeue" : action;
}

/**
 * The script's arguments: numkeys, KEYS, then ARGV as name/value pairs. Built as one array
 * literal: this runs before every call of a sweep, on its critical path.
 */
export function sweepPageArgs(request: PageRequest): ScriptCall {
  const { group, fence, lane } = request;
  const fenceArgs = fence === undefined ? undefined : fenceArguments(fence, group.stream);
  const keys =
    lane === undefined
      ? [group.stream, group.requeueStream, group.deadLetterStream, group.touchesKey]
      : [lane, lane, group.deadLetterStream, group.touchesKey];
  if (fenceArgs !== undefined) keys.push(fenceArgs.key);
  keys.push(
    carriedCountsKey(keys[0] ?? "", group.group),
    carriedCountsKey(keys[1] ?? "", group.group),
  );
  const index = deadLetterIndexKeys(group);
  keys.push(index.index, index.state, index.floor);
  const backoff = backoffPolicy(group);
  const args: ScriptCall = [
    keys.length,
    ...keys,
    "group",
    group.group,
    "consumer",
    request.janitorConsumer,
    "minIdleMs",
    group.minIdleMs,
    "cursor",
    request.cursor,
    "maxClaimed",
    request.maxClaimed,
    "maxExamined",
    request.maxExamined,
    "firstWindow",
    request.firstWindow,
    "budgetUs",
    Math.round(request.budgetMs * 1000),
    "maxDeliveries",
    group.maxDeliveries,
    "action",
    scriptAction(group.action),
    "deadLetterMaxLen",
    group.deadLetterMaxLen,
    "fence",
    fenceArgs?.value ?? "",
    "rotation",
    request.rotation,
    "backoffMs",
    backoff.tiers.join(","),
    "backoffJitter",
    backoff.jitterPermille,
    "deadLetterAfterIdleMs",
    group.deadLetterAfterIdleMs ?? 0,
  ];
  if (lane !== undefined) args.push("originalStream", group.stream);
  return args;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

export function parseSweepPageReply(reply: unknown): PageResult {
  if (!Array.isArray(reply) || reply.length % 2 !== 0) {
    throw new ScriptReplyError(`unexpected sweepPage reply: ${JSON.stringify(reply)}`);
  }
  const fields = new Map<string, unknown>();
  for (let i = 0; i < reply.length; i += 2) fields.set(String(reply[i]), reply[i + 1]);
  const count = (name: string): number => {
    const value = Number(fields.get(name));
    if (!Number.isFinite(value)) throw new ScriptReplyError(`sweepPage reply without ${name}`);
    return value;
  };
  const cursor = fields.get("cursor");
  if (typeof cursor !== "string") throw new ScriptReplyError("sweepPage reply without cursor");
  const error = fields.get("error");
  return {
    nextCursor: cursor,
    examined: count("examined"),
    claimed: count("claimed"),
    requeued: count("requeued"),
    reassigned: count("reassigned"),
    deadLetteredMaxDeliveries: count("deadLetteredMaxDeliveries"),
    deadLetteredAction: count("deadLetteredAction"),
    deadLetteredMaxIdle: count("deadLetteredMaxIdle"),
    leftPending: count("leftPending"),
    claimedFromActiveConsumer: count("claimedFromActiveConsumer"),
    handedOff: count("handedOff"),
    windows: count("windows"),
    durationMs: count("durationUs") / 1000,
    claimMs: count("claimUs") / 1000,
    ghostIds: strings(fields.get("ghosts")),
    oversizedIds: strings(fields.get("oversized")),
    invalidCountIds: strings(fields.get("invalidCountIds")),
    invalidCounts: count("invalidCounts"),
    requeuedIds: strings(fields.get("requeuedIds")),
    reassignedIds: strings(fields.get("reassignedIds")),
    deadLetteredIds: strings(fields.get("deadLetteredIds")),
    deadLettersDropped: count("deadLettersDropped"),
    deadLetterIndexed: fields.get("deadLetterIndexed") === 1,
    ...(error === undefined
      ? {}
      : { error: typeof error === "string" ? error : JSON.stringify(error) }),
  };
}

/** Runs one call of the sweep script (see scripts/sweepPage.lua). */
export async function runSweepPage(
  redis: ScriptedRedis,
  request: PageRequest,
): Promise<PageResult> {
  return parseSweepPageReply(await callScript(redis, "sjSweepPage", sweepPageArgs(request)));
}
