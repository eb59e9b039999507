import {
  COMMON_HELP,
  COMMON_OPTIONS,
  durationOption,
  integerOption,
  requiredString,
  runFrom,
  type OperatorCommand,
} from "./OperatorCommand.js";
import { UsageError } from "../Command.js";

export const trimCommand: OperatorCommand = {
  words: ["trim"],
  synopsis: "trim --stream S (--max-len N | --max-age D) [--dry-run] [--json]",
  help: `Usage: stream-janitor trim --stream S (--max-len N | --max-age D) [--dry-run] [--json]

Safe trimming: removes entries from the head of the stream toward the limit, but never one that
any consumer group of the stream still needs, configured or not: nothing at or after a group's
oldest pending entry, nothing not yet delivered to a group. So it never creates ghosts. Reports
what it removed and which groups held it back. Each page (1000 entries) is one script that
computes the floor and trims with XTRIM MINID. A stream without groups is trimmed to the limit.
Does not need the lease.

Options:
      --stream S        stream (required)
      --max-len N       keep at most N entries
      --max-age D       remove entries older than D (by their id, on the Redis clock):
                        500ms, 30s, 5m, 2h, 7d or milliseconds
      --max-age-ms MS   the older spelling of --max-age
      --dry-run         count what would be removed, change nothing
${COMMON_HELP}

Prints {"stream":S,"removed":N,"length":N,"blockedBy":[{"group":G,"neededFromId":ID}],
"floorId":ID,"dryRun":false} with --json.

Examples:
  stream-janitor trim --stream orders --max-len 1000000 --dry-run
  stream-janitor trim --stream orders --max-age 1d --json`,
  stopsOnSignal: true,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    "max-len": { type: "string" },
    "max-age": { type: "string" },
    "max-age-ms": { type: "string" },
    "dry-run": { type: "boolean" },
  },
  validate(values) {
    requiredString(values, "stream");
    const maxLen = integerOption(values, "max-len");
    const maxAgeMs = durationOption(values, "max-age", "max-age-ms", 1);
    if ((maxLen === undefined) === (maxAgeMs === undefined)) {
      throw new UsageError("give exactly one of --max-len and --max-age-ms or --max-age");
    }
  },
  run: runFrom(async () => (await import("./runTrim.js")).runTrim),
};
