import { COMMON_HELP, COMMON_OPTIONS, runFrom, type OperatorCommand } from "./OperatorCommand.js";

export const inspectCommand: OperatorCommand = {
  words: ["inspect"],
  synopsis: "inspect [--config FILE] [--json] [--url URL]",
  help: `Usage: stream-janitor inspect [--config FILE] [--json] [--url URL]

One read-only report of every configured group: PEL size, age of the oldest pending entry, the
consumers holding most, lag (entries and age of the oldest undelivered entry), dead-letter length
and age of the oldest dead letter, retention headroom; and who holds the lease (host, pid,
fencing token, time left). Every Redis command it sends costs O(1) or O(consumers), whatever the
size of the PEL. The STATUS column is each group's verdict as a running janitor has it (see
stream-janitor status), asked at --url, else at http.host:http.port, within 1 s; with no janitor
there it shows "-" and one line says why.

Options:
${COMMON_HELP}
      --url URL       the janitor to ask for the statuses (default: http.host:http.port)

Examples:
  stream-janitor inspect --config /etc/stream-janitor/config.yaml
  stream-janitor inspect --json | jq '.groups[] | select(.pending > 1000)'`,
  options: { ...COMMON_OPTIONS, url: { type: "string" } },
  run: runFrom(async () => (await import("./runInspect.js")).runInspect),
};
