import { withTimeout } from "../../core/withTimeout.js";
import { hostname } from "node:os";
import { appendEvent, type AdvisoryEvent } from "../../events/EventWriter.js";
import type { OperatorSession } from "./OperatorCommand.js";

/** An event write that takes longer is given up: the command has done its work already. */
const EVENT_TIMEOUT_MS = 2000;

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
}

/**
 * The advisory event of an operator command (README "Configuration", `events.*`), `by` operator@<hostname>,
 * written after the work it reports and best effort, as the daemon's: a write that fails (a
 * read-only ACL user, events.stream gone, Redis slow) is one warning on stderr and changes
 * neither the output nor the exit code.
 */
export async function writeOperatorEvent(
  session: OperatorSession,
  event: AdvisoryEvent,
): Promise<void> {
  const { stream: streamKey, maxLen } = session.config.events;
  if (streamKey === "") return;
  const by = `operator@${hostname()}`;
  try {
    await withTimeout(
      appendEvent({ redis: session.redis, streamKey, maxLen, by }, event),
      EVENT_TIMEOUT_MS,
      (): never => {
        throw new Error(`no reply within ${EVENT_TIMEOUT_MS}ms`);
      },
    );
  } catch (error) {
    session.stderr.write(
      `stream-janitor: warning: the ${event.type} event was not written to ${streamKey} (${firstLine(error)}); the work it reports is done\n`,
    );
  }
}
