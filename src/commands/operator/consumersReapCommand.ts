import {
  COMMON_HELP,
  COMMON_OPTIONS,
  durationOption,
  requiredString,
  runFrom,
  type OperatorCommand,
} from "./OperatorCommand.js";
import { UsageError } from "../Command.js";

export const consumersReapCommand: OperatorCommand = {
  words: ["consumers", "reap"],
  synopsis: "consumers reap --stream S --group G --idle D [--dry-run] [--json]",
  help: `Usage: stream-janitor consumers reap --stream S --group G --idle D [--dry-run] [--json]

Deletes the group's consumers that own no pending entry and were inactive at least D
(XINFO CONSUMERS "inactive" on Redis 7.2+, "idle" before). The check and the delete are one
script: a consumer that reads an entry in between cannot exist, so no pending entry is ever
discarded with its consumer. The janitor's own consumer (sweep.consumerName) is never deleted.
Does not need the lease.

Options:
      --stream S      stream (required)
      --group G       consumer group (required)
      --idle D        minimum inactivity (required): 500ms, 30s, 5m, 2h, 7d or milliseconds
      --idle-ms MS    the older spelling of --idle
      --dry-run       list what would be deleted, change nothing
${COMMON_HELP}

Prints {"reaped":[names],"keptWithPending":N,"usedInactive":true|false,"dryRun":false} with --json.

Examples:
  stream-janitor consumers reap --stream orders --group billing --idle 1d --dry-run
  stream-janitor consumers reap --stream orders --group billing --idle 1h --json`,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    group: { type: "string" },
    idle: { type: "string" },
    "idle-ms": { type: "string" },
    "dry-run": { type: "boolean" },
  },
  validate(values) {
    requiredString(values, "stream");
    requiredString(values, "group");
    if (durationOption(values, "idle", "idle-ms") === undefined) {
      throw new UsageError("--idle or --idle-ms is required");
    }
  },
  run: runFrom(async () => (await import("./runConsumersReap.js")).runConsumersReap),
};
