import { createProgress } from "./createProgress.js";
import { RateLimiter } from "../../operator/RateLimiter.js";
import { redriveDeadLetters, RedriveRefusedError } from "../../operator/redriveDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { describeHeldBack } from "../../operator/HeldBackTally.js";
import {
  checkRedriveIds,
  ID_HELP,
  idsOption,
  reasonOption,
  reportUnknownIds,
  REASON_HELP,
} from "./dlqOptions.js";
import { existingGroup } from "./existingGroup.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  integerOption,
  OperatorFailure,
  requiredString,
  writeJson,
  type OperatorCommand,
} from "./OperatorCommand.js";

const DEFAULT_RATE = 1000;

export const dlqRedriveCommand: OperatorCommand = {
  words: ["dlq", "redrive"],
  synopsis:
    "dlq redrive --stream S --group G [--id ID...] [--limit N] [--rate N] [--reason R] [--dry-run] [--json]",
  help: `Usage: stream-janitor dlq redrive --stream S --group G [--id ID...] [--limit N] [--rate N] [--reason R] [--dry-run] [--json]

Moves the group's dead letters back for another round of deliveries: each goes to the group's
requeue target (requeueStream, else the source stream) with its original fields byte for byte and
in order, x-original-id kept, x-delivery-count 0, x-redrive-count + 1 and x-redriven-at (Unix ms).
Copy and removal happen in one script per page: interrupt it (Ctrl-C, kill -9) and run it again,
nothing is duplicated or lost. Only dead letters present when it starts are moved. A target read
by other consumer groups is refused (they would receive the copies too). A dead letter that a
consumer group reading the dead-letter stream still needs (pending there, or not yet delivered to
it) stays where it is, and the groups that held dead letters back are named. A target that has
run out of ids is refused before anything is copied. Does not need the lease.

Options:
      --stream S      source stream (required)
      --group G       consumer group (required)
${ID_HELP}; an id that is not
                      one of the group's dead letters is reported (exit 1)
      --limit N       move at most N dead letters (default: all)
      --rate N        at most N entries per second (default ${DEFAULT_RATE}; 0: unlimited)
${REASON_HELP}
      --dry-run       count what would move, change nothing
${COMMON_HELP}

Prints {"redriven":N,"remaining":N,"dryRun":false} with --json; remaining counts the group's dead
letters (of that reason) still in the dead-letter stream afterwards; "heldBackBy":[{"group":G,
"entries":N}] is added when groups of the dead-letter stream held dead letters back, and
"unknownIds" with --id.

Examples:
  stream-janitor dlq redrive --stream orders --group billing --dry-run
  stream-janitor dlq redrive --stream orders --group billing --reason action --rate 200
  stream-janitor dlq redrive --stream orders --group billing --limit 10 --json
  stream-janitor dlq redrive --stream orders --group billing --id 1796057966000-0`,
  stopsOnSignal: true,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    group: { type: "string" },
    id: { type: "string", multiple: true },
    limit: { type: "string" },
    rate: { type: "string" },
    reason: { type: "string" },
    "dry-run": { type: "boolean" },
  },
  validate(values) {
    requiredString(values, "stream");
    requiredString(values, "group");
    integerOption(values, "limit", 1);
    integerOption(values, "rate");
    reasonOption(values);
    idsOption(values);
    checkRedriveIds(values);
  },
  async run(values, session) {
    const group = await existingGroup(
      session,
      requiredString(values, "stream"),
      requiredString(values, "group"),
    );
    try {
      const summary = await redriveDeadLetters(session.redis, group, {
        limit: integerOption(values, "limit", 1) ?? Number.POSITIVE_INFINITY,
        reason: reasonOption(values),
        ...(values.id === undefined ? {} : { ids: idsOption(values) }),
        dryRun: values["dry-run"] === true,
        limiter: new RateLimiter({ ratePerSecond: integerOption(values, "rate") ?? DEFAULT_RATE }),
        progress: createProgress("redrive", session.stderr),
        signal: session.signal,
      });
      if (values.json === true) writeJson(session, summary);
      else {
        const verb = summary.dryRun ? "would redrive" : "redriven";
        session.stdout.write(
          `${group.id}: ${verb} ${summary.redriven} dead letter(s) from ${group.deadLetterStream} to ${group.requeueStream}; ${summary.remaining} remaining${describeHeldBack(summary.heldBackBy)}\n`,
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
  },
};
