import { parseArgs } from "node:util";

/** Long enough for the whole story (stuck orders, the poison order's deliveries, ghosts). */
export const DEFAULT_DEMO_DURATION_MS = 15_000;

export interface DemoArgs {
  /** Stop by itself after this long, with a final digest; undefined (--keep-running) runs until Ctrl-C. */
  durationMs: number | undefined;
  help: boolean;
}

export const DEMO_USAGE = `usage: npm run demo [-- --duration-ms N | --keep-running]

Plays a short story on a Redis stream with stream-janitor running in-process: a crashed
consumer, a poison order, a retention trim that leaves ghosts. It ends by itself after
${DEFAULT_DEMO_DURATION_MS / 1000} s with a final digest of the metrics (Ctrl-C ends it sooner).

  --duration-ms N   stop by itself after N milliseconds instead
  --keep-running    run until Ctrl-C
  -h, --help        show this help

Redis: a throwaway redis-server from PATH, or the server in STREAM_JANITOR_REDIS_URL (only keys
starting with demo: or {demo: are touched; nothing is flushed).`;

export class DemoUsageError extends Error {
  override name = "DemoUsageError";
}

export function parseDemoArgs(argv: readonly string[]): DemoArgs {
  let values: { "duration-ms"?: string; "keep-running"?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        "duration-ms": { type: "string" },
        "keep-running": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new DemoUsageError(error instanceof Error ? error.message : String(error));
  }
  const raw = values["duration-ms"];
  if (raw !== undefined && values["keep-running"] === true) {
    throw new DemoUsageError("--duration-ms and --keep-running exclude each other");
  }
  let durationMs: number | undefined =
    values["keep-running"] === true ? undefined : DEFAULT_DEMO_DURATION_MS;
  if (raw !== undefined) {
    durationMs = Number(raw);
    if (!/^\d+$/u.test(raw) || !Number.isSafeInteger(durationMs) || durationMs <= 0) {
      throw new DemoUsageError(`--duration-ms: expected a positive whole number, got "${raw}"`);
    }
  }
  return { durationMs, help: values.help === true };
}
