import { COMMON_HELP, COMMON_OPTIONS, runFrom, type OperatorCommand } from "./OperatorCommand.js";

export const inspectCommand: OperatorCommand = {
  words: ["inspect"],
  synopsis: "inspect [--config FILE] [--json]",
  help: `Usage: stream-janitor inspect [--config FILE] [--json]

One read-only report of every configured group: PEL size, age of the oldest pending entry, the
consumers holding most, lag (entries and age of the oldest undelivered entry), dead-letter length
and age of the oldest dead letter, retention headroom; and who holds the lease (host, pid,
fencing token, time left). Every Redis command it sends costs O(1) or O(consumers), whatever the
size of the PEL.

Options:
${COMMON_HELP}

Examples:
  stream-janitor inspect --config /etc/stream-janitor/config.yaml
  stream-janitor inspect --json | jq '.groups[] | select(.pending > 1000)'`,
  options: COMMON_OPTIONS,
  run: runFrom(async () => (await import("./runInspect.js")).runInspect),
};
