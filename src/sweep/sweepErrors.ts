import type { SweepErrorKind } from "./GroupSweepResult.js";

/**
 * The error codes the sweep script starts its refusals with (see the header of
 * src/scripts/lua/sweepPage.lua), and the Redis error codes it passes on, mapped to the kind
 * reported in results and in `sweep_failures_total{kind}`. Every refusal changes nothing.
 */
export const SWEEP_ERROR_CODES = {
  FENCED: "fenced",
  NOSTREAM: "missing-stream",
  NOGROUP: "missing-group",
  WRONGTYPE: "wrong-type",
  IDSEXHAUSTED: "ids-exhausted",
  CONSUMERBUSY: "consumer-collision",
} as const satisfies Record<string, SweepErrorKind>;

export type SweepErrorCode = keyof typeof SWEEP_ERROR_CODES;

function isSweepErrorCode(word: string): word is SweepErrorCode {
  return Object.hasOwn(SWEEP_ERROR_CODES, word);
}

export function classifySweepError(error: unknown): { kind: SweepErrorKind; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  // Redis 7 passes script errors on with their code first (a command's own, or the script's).
  const unwrapped = message;
  const space = unwrapped.indexOf(" ");
  const code = space === -1 ? unwrapped : unwrapped.slice(0, space);
  if (isSweepErrorCode(code)) {
    if (code === "FENCED") {
      return {
        kind: "fenced",
        message: "the lease is held by another process; nothing was changed",
      };
    }
    return { kind: SWEEP_ERROR_CODES[code], message: unwrapped.slice(space + 1) };
  }
  const isReply = error instanceof Error && error.name === "ReplyError";
  return { kind: isReply ? "script" : "redis", message };
}
