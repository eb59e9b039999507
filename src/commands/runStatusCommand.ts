import type { JanitorConfig } from "../core/configTypes.js";
import { BAD_STATUSES, type StatusReport } from "../core/groupStatus.js";
import { fetchStatusReport } from "../operations/fetchStatusReport.js";
import { formatStatusReport } from "../operations/formatStatusReport.js";
import { EXIT } from "./exitCodes.js";

/** The janitor answers from memory: a few seconds covers a slow network, and bounds the wait. */
const STATUS_TIMEOUT_MS = 5000;

/**
 * `status`: asks a running janitor for its verdicts (the window of samples they need lives in
 * its memory) and prints them; exit 1 when a group needs attention, so scripts can test it.
 * Without --url and with no janitor answering, it samples Redis itself over `windowMs` (someone
 * on call may have the configuration and Redis but not the janitor's port) and says so.
 */
export async function runStatusCommand(
  config: JanitorConfig,
  options: { json: boolean; url: string | undefined; windowMs: number; signal: AbortSignal },
): Promise<number> {
  const answer = await fetchStatusReport(config.http, {
    url: options.url,
    timeoutMs: STATUS_TIMEOUT_MS,
    signal: options.signal,
  });
  // Interrupted: the caller says so and exits 130 or 143.
  if (options.signal.aborted) return EXIT.failure;
  if (!answer.ok && (!answer.unreachable || options.url !== undefined)) {
    process.stderr.write(`stream-janitor status: ${answer.problem}\n`);
    return EXIT.failure;
  }
  if (!answer.ok) {
    // Loaded only now: asking a janitor needs no Redis client.
    const { sampleStatusLocally } = await import("./sampleStatusLocally.js");
    const local = await sampleStatusLocally(config, options.windowMs, options.signal);
    if (options.signal.aborted) return EXIT.failure;
    if (!local.ok) {
      process.stderr.write(`stream-janitor status: ${answer.problem}; ${local.problem}\n`);
      return EXIT.failure;
    }
    const text = `no janitor answered at ${answer.url}: ${formatStatusReport(local.report)}`;
    process.stdout.write(options.json ? `${JSON.stringify(local.report)}\n` : `${text}\n`);
    return exitOf(local.report);
  }
  process.stdout.write(options.json ? answer.body : `${formatStatusReport(answer.report)}\n`);
  return exitOf(answer.report);
}

function exitOf(report: StatusReport): number {
  const bad = report.groups.some((group) => BAD_STATUSES.includes(group.status));
  return bad ? EXIT.failure : EXIT.ok;
}
