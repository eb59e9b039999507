import { createProgress } from "../../operator/progress.js";
import { safeTrim } from "../../operator/safeTrim.js";
import { EXIT } from "../exitCodes.js";
import { existingStream } from "./existingGroup.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  integerOption,
  requiredString,
  UsageError,
  writeJson,
  type OperatorCommand,
} from "./OperatorCommand.js";

export const trimCommand: OperatorCommand = {
  words: ["trim"],
  synopsis: "trim --stream S (--max-len N | --max-age-ms MS) [--dry-run] [--json]",
  help: `Usage: stream-janitor trim --stream S (--max-len N | --max-age-ms MS) [--dry-run] [--json]

Safe trimming: removes entries from the head of the stream toward the limit, but never one that
any consumer group of the stream still needs, configured or not: nothing at or after a group's
oldest pending entry, nothing not yet delivered to a group. So it never creates ghosts. Reports
what it removed and which groups held it back. Each page (1000 entries) is one script that
computes the floor and trims with XTRIM MINID. A stream without groups is trimmed to the limit.
Does not need the lease.

Options:
      --stream S        stream (required)
      --max-len N       keep at most N entries
      --max-age-ms MS   remove entries older than MS (by their id, on the Redis clock)
      --dry-run         count what would be removed, change nothing
${COMMON_HELP}

Prints {"stream":S,"removed":N,"length":N,"blockedBy":[{"group":G,"neededFromId":ID}],
"floorId":ID,"dryRun":false} with --json.

Examples:
  stream-janitor trim --stream orders --max-len 1000000 --dry-run
  stream-janitor trim --stream orders --max-age-ms 86400000 --json`,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    "max-len": { type: "string" },
    "max-age-ms": { type: "string" },
    "dry-run": { type: "boolean" },
  },
  validate(values) {
    requiredString(values, "stream");
    const maxLen = integerOption(values, "max-len");
    const maxAgeMs = integerOption(values, "max-age-ms", 1);
    if ((maxLen === undefined) === (maxAgeMs === undefined)) {
      throw new UsageError("give exactly one of --max-len and --max-age-ms");
    }
  },
  async run(values, session) {
    const stream = requiredString(values, "stream");
    await existingStream(session, stream);
    const summary = await safeTrim(session.redis, {
      stream,
      maxLen: integerOption(values, "max-len"),
      maxAgeMs: integerOption(values, "max-age-ms", 1) ?? 0,
      dryRun: values["dry-run"] === true,
      progress: createProgress("trim", session.stderr),
    });
    if (values.json === true) writeJson(session, summary);
    else {
      const verb = summary.dryRun ? "would remove" : "removed";
      const held =
        summary.blockedBy.length === 0
          ? ""
          : `; held back by ${summary.blockedBy.map((b) => `group ${b.group} (needs ${b.neededFromId})`).join(", ")}`;
      session.stdout.write(
        `${summary.stream}: ${verb} ${summary.removed} entries, ${summary.length} left${held}\n`,
      );
    }
    return EXIT.ok;
  },
};
