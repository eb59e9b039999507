import { parseArgs } from "node:util";

export interface DemoArgs {
  /** Stop by itself after this long (tests, recordings); undefined runs until Ctrl-C. */
  durationMs: number | undefined;
  /** A janitor running elsewhere (the compose quickstart): none starts in-process, this is scraped. */
  janitorUrl: string | undefined;
  help: boolean;
}

export const DEMO_USAGE = `usage: npm run demo [-- --duration-ms N] [-- --janitor-url URL]

Plays a short story on a Redis stream with stream-janitor running in-process: a crashed
consumer, a poison order, a retention trim that leaves ghosts. Stop it with Ctrl-C.

  --duration-ms N   stop by itself after N milliseconds
  --janitor-url URL play only the producer and consumers; the janitor runs elsewhere with the
                    demo's settings (deploy/compose/janitor.yaml) and serves /metrics at URL
  -h, --help        show this help

Redis: a throwaway redis-server from PATH, or the server in STREAM_JANITOR_REDIS_URL (only keys
starting with demo: or {demo: are touched; nothing is flushed).`;

export class DemoUsageError extends Error {
  override name = "DemoUsageError";
}

export function parseDemoArgs(argv: readonly string[]): DemoArgs {
  let values: { "duration-ms"?: string; "janitor-url"?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        "duration-ms": { type: "string" },
        "janitor-url": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new DemoUsageError(error instanceof Error ? error.message : String(error));
  }
  const raw = values["duration-ms"];
  let durationMs: number | undefined;
  if (raw !== undefined) {
    durationMs = Number(raw);
    if (!/^\d+$/u.test(raw) || !Number.isSafeInteger(durationMs) || durationMs <= 0) {
      throw new DemoUsageError(`--duration-ms: expected a positive whole number, got "${raw}"`);
    }
  }
  const janitorUrl = values["janitor-url"];
  if (janitorUrl !== undefined && !/^https?:\/\/[^/]+$/u.test(janitorUrl.replace(/\/$/u, ""))) {
    throw new DemoUsageError(`--janitor-url: expected http://host:port, got "${janitorUrl}"`);
  }
  return { durationMs, janitorUrl: janitorUrl?.replace(/\/$/u, ""), help: values.help === true };
}
