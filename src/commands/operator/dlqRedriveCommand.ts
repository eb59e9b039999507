import { checkAsync, DEFAULT_KEEP } from "./dlqTaskOptions.js";
import {
  checkFromFile,
  checkRedriveIds,
  DEFAULT_RATE,
  ID_HELP,
  idsOption,
  reasonOption,
  REASON_HELP,
  toOption,
  TO_HELP,
} from "./dlqOptions.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  durationOption,
  integerOption,
  requiredString,
  runFrom,
  type OperatorCommand,
} from "./OperatorCommand.js";

const runNow = runFrom(async () => (await import("./runDlqRedrive.js")).runDlqRedrive);
const runAsync = runFrom(async () => (await import("./runDlqRedriveAsync.js")).runDlqRedriveAsync);

export const dlqRedriveCommand: OperatorCommand = {
  words: ["dlq", "redrive"],
  synopsis:
    "dlq redrive --stream S --group G [--id ID...] [--limit N] [--rate N] [--reason R] [--older-than D] [--to lane] [--dry-run] [--json]\n  stream-janitor dlq redrive --async --stream S --group G [--limit N] [--rate N] [--reason R] [--older-than D] [--to lane] [--by NAME] [--keep D] [--json]\n  stream-janitor dlq redrive --from-file FILE [--stream S --group G] [--rate N] [--to lane] [--dry-run] [--json]",
  help: `Usage: stream-janitor dlq redrive --stream S --group G [--id ID...] [--limit N] [--rate N] [--reason R] [--older-than D] [--to lane] [--dry-run] [--json]
       stream-janitor dlq redrive --async --stream S --group G [--limit N] [--rate N] [--reason R] [--older-than D] [--to lane] [--by NAME] [--keep D] [--json]
       stream-janitor dlq redrive --from-file FILE [--stream S --group G] [--rate N] [--to lane] [--dry-run] [--json]

Moves the group's dead letters back for another round of deliveries: each goes to the group's
requeue target (requeueStream, else the source stream) with its original fields byte for byte and
in order, x-original-id kept, x-delivery-count 0, x-redrive-count + 1 and x-redriven-at (Unix ms).
Copy and removal happen in one script per page: interrupt it (Ctrl-C, kill -9) and run it again,
nothing is duplicated or lost. Only dead letters present when it starts are moved. A target read
by other consumer groups is refused (they would receive the copies too): --to lane redrives into
the group's own retry lane instead, for any action. A dead letter that a
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
      --older-than D  only dead letters dead-lettered at least D ago (Redis clock), as
                      dlq purge selects them; combines with --reason
      --older-than-ms MS  the older spelling of --older-than
${TO_HELP}
      --dry-run       count what would move, change nothing
      --async         start a redrive task that the leader runs, print its id and return
                      (see dlq tasks, dlq cancel); one active task per dead-letter stream
      --by NAME       with --async: who started it (default: the OS user)
      --keep D        with --async: how long the finished task is listed (default ${DEFAULT_KEEP})
      --from-file FILE  the dead letters a dlq purge --save wrote to FILE, copied back the
                      same way (the file is checked whole first: a bad line is named and
                      nothing is written); each at most once, however often the file is run
                      (the ids restored are remembered 30 days); --stream/--group, when
                      given, must be the file's
${COMMON_HELP}

Prints {"redriven":N,"remaining":N,"dryRun":false} with --json; remaining counts the group's dead
letters (of that reason) still in the dead-letter stream afterwards; "heldBackBy":[{"group":G,
"entries":N}] is added when groups of the dead-letter stream held dead letters back, and
"unknownIds" with --id.

Examples:
  stream-janitor dlq redrive --stream orders --group billing --dry-run
  stream-janitor dlq redrive --stream orders --group billing --reason action --rate 200
  stream-janitor dlq redrive --stream orders --group billing --limit 10 --json
  stream-janitor dlq redrive --stream orders --group billing --to lane
  stream-janitor dlq redrive --stream orders --group billing --older-than 1d --reason action
  stream-janitor dlq redrive --stream orders --group billing --id 1796057966000-0
  stream-janitor dlq redrive --async --stream orders --group billing --rate 200
  stream-janitor dlq redrive --from-file purged.jsonl --stream orders --group billing`,
  stopsOnSignal: true,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    group: { type: "string" },
    id: { type: "string", multiple: true },
    limit: { type: "string" },
    rate: { type: "string" },
    reason: { type: "string" },
    "older-than": { type: "string" },
    "older-than-ms": { type: "string" },
    to: { type: "string" },
    "dry-run": { type: "boolean" },
    "from-file": { type: "string" },
    async: { type: "boolean" },
    by: { type: "string" },
    keep: { type: "string" },
  },
  validate(values) {
    checkAsync(values);
    if (values["from-file"] !== undefined) {
      checkFromFile(values);
      integerOption(values, "rate");
      toOption(values);
      return;
    }
    requiredString(values, "stream");
    requiredString(values, "group");
    integerOption(values, "limit", 1);
    integerOption(values, "rate");
    reasonOption(values);
    durationOption(values, "older-than", "older-than-ms");
    toOption(values);
    idsOption(values);
    checkRedriveIds(values);
  },
  run: (values, session) => (values.async === true ? runAsync : runNow)(values, session),
};
