import type { SweepErrorKind } from "./GroupSweepResult.js";

/** Scripts refuse with an error code first (see sweepPage.lua); Redis does the same. */
export function classifySweepError(error: unknown): { kind: SweepErrorKind; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const code = /^(?:ERR Error running script[^:]*:\s*)?([A-Z]+)\b/u.exec(message)?.[1];
  switch (code) {
    case "FENCED":
      return {
        kind: "fenced",
        message: "the lease is held by another process; nothing was changed",
      };
    case "NOSTREAM":
      return { kind: "missing-stream", message: message.replace(/^NOSTREAM /u, "") };
    case "NOGROUP":
      return { kind: "missing-group", message: message.replace(/^NOGROUP /u, "") };
    case "WRONGTYPE":
      return { kind: "wrong-type", message: message.replace(/^WRONGTYPE /u, "") };
    default:
      break;
  }
  const isReply = error instanceof Error && error.name === "ReplyError";
  return { kind: isReply ? "script" : "redis", message };
}
