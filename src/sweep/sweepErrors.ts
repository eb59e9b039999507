import type { SweepErrorKind } from "./GroupSweepResult.js";
import { redisErrorOf, type RedisErrorCode } from "../redis/redisErrors.js";
import { ScriptReplyError } from "../scripts/scriptReplies.js";
import { SWEEP_PAGE_ERRORS, type SweepPageError } from "../scripts/sweepPage.js";

/**
 * The kind, reported in results and in `sweep_failures_total{kind}`, of each error code the sweep
 * script refuses with or passes on (its list is SWEEP_PAGE_ERRORS, beside the script's typed
 * interface: the compiler holds this table to exactly that list). Every refusal changes nothing.
 */
export const SWEEP_ERROR_CODES = {
  FENCED: "fenced",
  NOSTREAM: "missing-stream",
  NOGROUP: "missing-group",
  WRONGTYPE: "wrong-type",
  IDSEXHAUSTED: "ids-exhausted",
  CONSUMERBUSY: "consumer-collision",
} as const satisfies Record<SweepPageError, SweepErrorKind>;

const SWEEP_CODES: ReadonlySet<RedisErrorCode> = new Set(SWEEP_PAGE_ERRORS);

function isSweepErrorCode(code: RedisErrorCode): code is SweepPageError {
  return SWEEP_CODES.has(code);
}

/**
 * The kind of a failed sweep, by the code of its error: a refusal's kind, `script` for any other
 * error Redis answered with (a command's, or a script's own failure) and for a script reply that
 * did not parse (Lua and TypeScript disagree), `redis` when Redis did not answer (connection,
 * timeout).
 */
export function classifySweepError(error: unknown): { kind: SweepErrorKind; message: string } {
  if (error instanceof ScriptReplyError) {
    return { kind: "script", message: `the script's reply did not parse: ${error.message}` };
  }
  const answered = redisErrorOf(error);
  if (answered === undefined) {
    return { kind: "redis", message: error instanceof Error ? error.message : String(error) };
  }
  const { code } = answered;
  if (!isSweepErrorCode(code)) return { kind: "script", message: answered.message };
  if (code === "FENCED") {
    return { kind: "fenced", message: "the lease is held by another process; nothing was changed" };
  }
  return { kind: SWEEP_ERROR_CODES[code], message: answered.detail };
}
