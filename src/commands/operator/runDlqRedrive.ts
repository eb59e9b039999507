import { createProgress } from "./createProgress.js";
import { RateLimiter } from "../../operations/RateLimiter.js";
import { redriveDeadLetters, RedriveRefusedError } from "../../operations/redriveDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { describeHeldBack } from "../../operations/HeldBackTally.js";
import { DEFAULT_RATE, idsOption, reasonOption, reportUnknownIds, toOption } from "./dlqOptions.js";
import { redriveView } from "../../operations/redriveTarget.js";
import { existingGroup } from "./existingGroup.js";
import {
  durationOption,
  integerOption,
  OperatorFailure,
  requiredString,
  writeJson,
  type OperatorSession,
} from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";
import { doneIds } from "./doneIds.js";
import { writeOperatorEvent } from "./writeOperatorEvent.js";

/** `dlq redrive`: what dlqRedriveCommand runs, loaded only when the command is run. */
export async function runDlqRedrive(
  values: OptionValues,
  session: OperatorSession,
): Promise<number> {
  if (values["from-file"] !== undefined) {
    return (await import("./runDlqRestore.js")).runDlqRestore(values, session);
  }
  const group = await existingGroup(
    session,
    requiredString(values, "stream"),
    requiredString(values, "group"),
  );
  const limit = integerOption(values, "limit", 1);
  const reason = reasonOption(values);
  const olderThanMs = durationOption(values, "older-than", "older-than-ms");
  const ids = values.id === undefined ? undefined : idsOption(values);
  const to = toOption(values);
  try {
    const summary = await redriveDeadLetters(session.redis, group, {
      limit: limit ?? Number.POSITIVE_INFINITY,
      reason,
      olderThanMs,
      ...(ids === undefined ? {} : { ids }),
      dryRun: values["dry-run"] === true,
      to,
      limiter: new RateLimiter({ ratePerSecond: integerOption(values, "rate") ?? DEFAULT_RATE }),
      progress: createProgress("redrive", session.stderr),
      signal: session.signal,
    });
    if (!summary.dryRun && summary.redriven > 0) {
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
  } catch (error) {
    if (error instanceof RedriveRefusedError) throw new OperatorFailure(error.message);
    throw error;
  }
}
