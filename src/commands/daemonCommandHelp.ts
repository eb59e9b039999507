/**
 * The `--help` of the commands that are not operator commands: run, sweep, check-config, and
 * status (which asks a running janitor over HTTP instead of Redis).
 */
export interface DaemonCommandHelp {
  /** One line for the overall usage. */
  readonly synopsis: string;
  /** The options it takes besides --config and --help. */
  readonly options: readonly ("json" | "offline" | "url" | "window")[];
  readonly help: string;
}

const CONFIG_HELP = `  -c, --config FILE   configuration, YAML or JSON (else STREAM_JANITOR_CONFIG; one is required)
  -h, --help          this help`;

export const DAEMON_COMMAND_HELP: Readonly<Record<string, DaemonCommandHelp>> = {
  run: {
    synopsis: "run [--config FILE]",
    options: [],
    help: `Usage: stream-janitor run [--config FILE]

The daemon: takes the lease (one leader at a time), sweeps every configured and discovered group
every sweep.intervalMs, trims by retention, and serves /metrics, /livez, /readyz, /status.json on
http.host:http.port. Logs are JSON lines on stdout.
SIGTERM or SIGINT stops it gracefully (the sweep in flight ends at a page boundary, the lease is
released; exit 0); a second one exits at once. SIGHUP reloads the configuration: a valid file
takes effect for groups, sweep, retention and log settings without losing the lease; an invalid
one is logged and ignored.

Options:
${CONFIG_HELP}

Exit codes: 0 stopped by a signal, 1 could not run (HTTP port taken, unsupported Redis),
78 invalid configuration (or one with nothing to do).

Examples:
  stream-janitor run --config /etc/stream-janitor/config.yaml
  STREAM_JANITOR_CONFIG=./config.yaml STREAM_JANITOR_LOG_LEVEL=debug stream-janitor run
  kill -HUP $(pidof stream-janitor)     # reload the configuration`,
  },
  sweep: {
    synopsis: "sweep [--config FILE] [--json]",
    options: ["json"],
    help: `Usage: stream-janitor sweep [--config FILE] [--json]

One sweep of every configured (and discovered) group under the lease, then exit: what run does
once. Refuses (exit 75, naming the holder) while another process holds the lease. Logs go to
stderr; the summary to stdout. Interrupted (Ctrl-C, SIGTERM), it stops at a page boundary,
releases the lease, prints what it did and exits 130 (SIGINT) or 143 (SIGTERM).

Options:
${CONFIG_HELP}
      --json          print the summary as one JSON object:
                      {"groups":[{"stream","group","claimed","requeued","reassigned",
                      "deadLettered","ghosts","complete"}]}; a group that could not be swept
                      has an "error" instead of the counts

Exit codes: 0 every group swept, 1 some group could not be swept (the summary is printed),
75 the lease is held by another process, 78 invalid configuration, 130/143 interrupted.

Examples:
  stream-janitor sweep --config /etc/stream-janitor/config.yaml
  stream-janitor sweep --config config.yaml --json | jq '.groups[] | select(.deadLettered > 0)'`,
  },
  "check-config": {
    synopsis: "check-config [--config FILE] [--offline]",
    options: ["offline"],
    help: `Usage: stream-janitor check-config [--config FILE] [--offline]

Validates the configuration and prints it as it takes effect (defaults filled in, durations in
milliseconds, secrets masked). Then it contacts Redis and reports every refusal run would make,
in run's words: a requeue into a stream other groups read, a discovered group whose keys span
two hash slots on Redis Cluster (a listed one is an invalid configuration, exit 78, as for run),
a command or key the ACL user may not use, a missing stream or group, a server too old.
With --offline it does not contact Redis.

Options:
${CONFIG_HELP}
      --offline       validate the file only; do not contact Redis

Exit codes: 0 valid (and, unless --offline, nothing run would refuse), 1 run would refuse a
group or Redis cannot be reached, 78 invalid configuration.

Examples:
  stream-janitor check-config --config /etc/stream-janitor/config.yaml
  stream-janitor check-config --config config.yaml --offline     # in CI, without Redis`,
  },
  status: {
    synopsis: "status [--config FILE] [--json] [--url URL] [--window D]",
    options: ["json", "url", "window"],
    help: `Usage: stream-janitor status [--config FILE] [--json] [--url URL] [--window D]

Every group's health status (OK, WARN, STALL, STOP, STUCK, REWIND, ERROR, UNKNOWN), since when,
and why, as a running janitor judges it: the verdicts need a window of samples over time, which
\`stream-janitor run\` keeps, so this command asks one (GET /status.json) at --url, else at
http.host:http.port of the configuration (0.0.0.0 and :: meaning this machine), with the
credentials of http.auth.bearerTokenFile or http.auth.basicAuthFile.
Without --url, when no janitor answers there, it samples Redis itself: 3 samples of every
configured and discovered group over --window (2s), judged by the janitor's rules, and says so
("sampled by this command"; in --json "sampledBy":"command"). A consumer is seen as the janitor
sees it (a read attempt within status.intervalMs x status.window); the verdicts that compare
samples (STALL, STUCK, WARN, REWIND) look only at that short window.
The table lists the statuses that need attention first, with lag, pending and due entries; the
header line names the janitor that answered (leader or replica) and its Redis server.

Options:
${CONFIG_HELP}
      --json          print the /status.json body exactly as the janitor served it (or the
                      command's own report, with "sampledBy":"command")
      --url URL       the janitor to ask (e.g. http://janitor-0.janitor:9478); never samples
      --window D      how long to sample when no janitor answers: 100ms to 1m (default 2s)

Exit codes: 0 every group is OK or UNKNOWN, 1 some group has a bad status (ERROR, REWIND, STOP,
STALL, STUCK, WARN), or no janitor answered and Redis could not be sampled, or the janitor
refused the credentials; 78 invalid configuration.
Handy in scripts: \`stream-janitor status >/dev/null || page-someone\`.

Examples:
  stream-janitor status --config /etc/stream-janitor/config.yaml
  stream-janitor status --url http://janitor-0.janitor:9478
  stream-janitor status --json | jq '.groups[] | select(.status != "OK")'`,
  },
};
