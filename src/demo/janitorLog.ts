import type { DestinationStream } from "pino";
import { DEMO_LANES, DEMO_MIN_IDLE_MS } from "./demoConfig.js";
import type { Printer } from "./printer.js";

type LogRecord = Record<string, unknown> & { level?: number; msg?: string };

const WARN = 40;
const NAME = "janitor";

function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value) ?? "";
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function where(record: LogRecord): string {
  return `${text(record.stream)}/${text(record.group)}`;
}

/** The friendly line for one of the daemon's log messages; undefined to leave it out. */
function describe(record: LogRecord): string | undefined {
  const n = (key: string): number => Number(record[key] ?? 0);
  // The daemon's start-up line already reads well: "connected to Redis 7.0.15 at ... (standalone)".
  if (typeof record.msg === "string" && record.msg.startsWith("connected to ")) return record.msg;
  switch (record.msg) {
    case "lease acquired":
      return `acquired the lease: this process is the leader (fencing token ${text(record.fencingToken)}) and sweeps every second`;
    case "lease given up":
      return "gave up the lease";
    case "lease lost":
      return `lost the lease (${text(record.reason)})`;
    case "group swept": {
      const lane = DEMO_LANES[text(record.group)];
      const into = lane === undefined || n("requeued") === 0 ? "" : ` into ${lane}`;
      const parts = [`requeued ${n("requeued")}${into}`, `dead-lettered ${n("deadLettered")}`];
      if (n("reassigned") > 0) parts.push(`reassigned ${n("reassigned")}`);
      return `swept ${where(record)}: claimed ${plural(n("claimed"), "entry", "entries")} idle for ${DEMO_MIN_IDLE_MS / 1000} s or more -> ${parts.join(", ")}`;
    }
    case "reassign found no live consumer; entries left pending":
      return `reassign found no live consumer in ${where(record)}: ${plural(n("count"), "entry", "entries")} left pending`;
    case "group sweep failed":
      return `sweep of ${where(record)} failed (${text(record.errorKind)}): ${text(record.error)}`;
    case "http server listening":
      return undefined; // the demo prints the URL itself, with a curl line
    default:
      break;
  }
  if (record.msg?.startsWith("ghosts:") === true) {
    const ids = Array.isArray(record.ids) ? record.ids.map(text).join(", ") : "";
    return `found ${plural(n("count"), "ghost", "ghosts")} in ${where(record)}: pending ids ${ids} have no body any more (trimmed); their data is lost, so they were counted, logged and dropped from the pending list`;
  }
  // Anything else worth a warning still shows, in its own words.
  if ((record.level ?? 0) >= WARN) {
    const err = record.err as { message?: unknown } | undefined;
    const detail = err?.message === undefined ? "" : `: ${text(err.message)}`;
    return `${record.level === WARN ? "warning" : "error"}: ${text(record.msg)}${detail}`;
  }
  return undefined;
}

/**
 * A pino destination that turns the daemon's JSON log lines into the transcript's plain lines.
 * The daemon logs as it would in production; only its presentation changes.
 */
export function janitorLogDestination(printer: Printer): DestinationStream {
  return {
    write(line: string): void {
      let record: LogRecord;
      try {
        record = JSON.parse(line) as LogRecord;
      } catch {
        printer.line(NAME, line.trimEnd());
        return;
      }
      const friendly = describe(record);
      if (friendly !== undefined) printer.line(NAME, friendly);
    },
  };
}
