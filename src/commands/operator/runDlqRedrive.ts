import { createProgress } from "./createProgress.js";
import { RateLimiter } from "../../operations/RateLimiter.js";
import { redriveDeadLetters, RedriveRefusedError } from "../../operations/redriveDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { describeHeldBack } from "../../operations/HeldBackTally.js";
import { idsOption, reportUnknownIds } from "./dlqOptions.js";
import { redriveView } from "../../operations/redriveTarget.js";
import { OperatorFailure, writeJson, type OperatorSession } from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";
import { doneIds } from "./doneIds.js";
import { writeOperatorEvent } from "./writeOperatorEvent.js";
import { redriveSelection, type RedriveSelection } from "./redriveSelection.js";

type RedriveSummary = Awaited<ReturnType<typeof redriveDeadLetters>>;

/** The advisory event of a redrive that moved something (a dry run moves nothing). */
async function recordRedrive(
  session: OperatorSession,
  selection: RedriveSelection,
  ids: string[] | undefined,
  summary: RedriveSummary,
): Promise<void> {
  if (summary.dryRun || summary.redriven === 0) return;
  const { group, to, limit, reason, olderThanMs } = selection;
  const { deadLetterStream } = group;
  const target = redriveView(group, to).requeueStream;
  await writeOperatorEvent(session, {
    type: "dlq-redriven",
    stream: group.stream,
    group: group.group,
    count: summary.redriven,
    ids: doneIds(ids, summary.redriven, [
      ...(summary.unknownIds ?? []),
      ...(summary.oversizedIds ?? []),
    ]),
    // The selectors used (JSON leaves out the ones not given).
    detail: { deadLetterStream, target, limit, reason, olderThanMs, ids },
  });
}

/** The summary on stdout (a line, or JSON), what was left on stderr; exit 1 for unknown ids. */
function reportRedrive(
  session: OperatorSession,
  values: OptionValues,
  { group, to }: RedriveSelection,
  summary: RedriveSummary,
): number {
  if (values.json === true) writeJson(session, summary);
  else {
    const verb = summary.dryRun ? "would redrive" : "redriven";
    session.stdout.write(
      `${group.id}: ${verb} ${summary.redriven} dead letter(s) from ${group.deadLetterStream} to ${redriveView(group, to).requeueStream}; ${summary.remaining} remaining${describeHeldBack(summary.heldBackBy)}\n`,
    );
  }
  if (summary.oversizedIds !== undefined) {
    session.stderr.write(
      `stream-janitor: left ${summary.oversizedIds.length} dead letter(s) with too many fields to copy in one script: ${summary.oversizedIds.slice(0, 10).join(", ")}\n`,
    );
  }
  const unknown = reportUnknownIds(session.stderr, "dlq redrive", group.id, summary.unknownIds);
  // Interrupted: the summary above says what moved; the caller exits 130 or 143.
  return unknown ? EXIT.failure : EXIT.ok;
}

/** `dlq redrive`: what dlqRedriveCommand runs, loaded only when the command is run. */
export async function runDlqRedrive(
  values: OptionValues,
  session: OperatorSession,
): Promise<number> {
  if (values["from-file"] !== undefined) {
    return (await import("./runDlqRestore.js")).runDlqRestore(values, session);
  }
  const selection = await redriveSelection(values, session);
  const ids = values.id === undefined ? undefined : idsOption(values);
  try {
    const summary = await redriveDeadLetters(session.redis, selection.group, {
      limit: selection.limit ?? Number.POSITIVE_INFINITY,
      reason: selection.reason,
      olderThanMs: selection.olderThanMs,
      ...(ids === undefined ? {} : { ids }),
      dryRun: values["dry-run"] === true,
      to: selection.to,
      limiter: new RateLimiter({ ratePerSecond: selection.rate }),
      progress: createProgress("redrive", session.stderr),
      signal: session.signal,
    });
    await recordRedrive(session, selection, ids, summary);
    return reportRedrive(session, values, selection, summary);
  } catch (error) {
    if (error instanceof RedriveRefusedError) throw new OperatorFailure(error.message);
    throw error;
  }
}
