import { requireGroup, requireStream } from "../../redis/requireGroup.js";
import { resolveOperatorGroup } from "../../operations/resolveOperatorGroup.js";
import type { ResolvedGroup } from "../../core/resolveGroup.js";
import { classifySweepError } from "../../sweep/sweepErrors.js";
import { OperatorFailure, type OperatorSession } from "./OperatorCommand.js";

/** A missing stream or group, or a key of another type: the sweep's words, without the code. */
async function orRefuse<T>(check: Promise<T>): Promise<T> {
  try {
    return await check;
  } catch (error) {
    const { kind, message } = classifySweepError(error);
    if (kind === "missing-stream" || kind === "missing-group" || kind === "wrong-type") {
      throw new OperatorFailure(message, { cause: error });
    }
    throw error;
  }
}

/**
 * `--stream S --group G` of a command that exists on the server: a typo is an error (exit 1,
 * naming it), never a silent "0 done". Then the pair's settings, configured or default.
 */
export async function existingGroup(
  session: OperatorSession,
  stream: string,
  group: string,
): Promise<ResolvedGroup> {
  await orRefuse(requireGroup(session.redis, stream, group));
  return resolveOperatorGroup(session.config, stream, group);
}

/** `--stream S` that exists on the server and is a stream. */
export async function existingStream(session: OperatorSession, stream: string): Promise<void> {
  await orRefuse(requireStream(session.redis, stream));
}
