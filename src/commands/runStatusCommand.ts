import type { JanitorConfig } from "../core/configTypes.js";
import { BAD_STATUSES } from "../core/groupStatus.js";
import { fetchStatusReport } from "../operator/fetchStatusReport.js";
import { formatStatusReport } from "../operator/formatStatusReport.js";
import { EXIT } from "./exitCodes.js";

/** The janitor answers from memory: a few seconds covers a slow network, and bounds the wait. */
const STATUS_TIMEOUT_MS = 5000;

/**
 * `status`: asks a running janitor for its verdicts (the window of samples they need lives in
 * its memory) and prints them; exit 1 when a group needs attention, so scripts can test it.
 */
export async function runStatusCommand(
  config: JanitorConfig,
  options: { json: boolean; url: string | undefined; signal: AbortSignal },
): Promise<number> {
  const answer = await fetchStatusReport(config.http, {
    url: options.url,
    timeoutMs: STATUS_TIMEOUT_MS,
    signal: options.signal,
  });
  // Interrupted: the caller says so and exits 130 or 143.
  if (options.signal.aborted) return EXIT.failure;
  if (!answer.ok) {
    process.stderr.write(`stream-janitor status: ${answer.problem}\n`);
    return EXIT.failure;
  }
  process.stdout.write(options.json ? answer.body : `${formatStatusReport(answer.report)}\n`);
  const bad = answer.report.groups.some((group) => BAD_STATUSES.includes(group.status));
  return bad ? EXIT.failure : EXIT.ok;
}
