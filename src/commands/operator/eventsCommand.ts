import { COMMON_HELP, COMMON_OPTIONS, runFrom, type OperatorCommand } from "./OperatorCommand.js";
import { sinceOption } from "./sinceOption.js";

export const eventsCommand: OperatorCommand = {
  words: ["events"],
  synopsis: "events [--follow] [--type T] [--stream S] [--group G] [--since D] [--json]",
  help: `Usage: stream-janitor events [--follow] [--type T] [--stream S] [--group G] [--since D] [--json]

The advisory events (events.stream): what the leader and the operator commands did, oldest
first, one per line. Read-only.

Options:
      --follow        then wait for new events (XREAD BLOCK) until SIGINT (exit 130); without
                      --since, only the new ones
      --type T        only events of this type (requeued, dead-lettered, ghosts, lease-lost ...)
      --stream S      only events about this stream
      --group G       only events about this group
      --since D       only events of the last D (e.g. 30m, 2h, 7d)
${COMMON_HELP.replace("print one JSON object on stdout", "one JSON object per event and line")}

Examples:
  stream-janitor events --since 1h
  stream-janitor events --follow --type dead-lettered --stream orders
  stream-janitor events --json --since 1d | jq 'select(.type == "ghosts")'`,
  options: {
    ...COMMON_OPTIONS,
    follow: { type: "boolean" },
    type: { type: "string" },
    stream: { type: "string" },
    group: { type: "string" },
    since: { type: "string" },
  },
  stopsOnSignal: true,
  validate(values) {
    sinceOption(values);
  },
  run: runFrom(async () => (await import("./runEvents.js")).runEvents),
};
