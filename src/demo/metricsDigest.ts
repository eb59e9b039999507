import type { Redis } from "ioredis";
import {
  DEMO_AUDIT_GROUP,
  DEMO_AUDIT_LANE,
  DEMO_BILLING_LANE,
  DEMO_DEAD_LETTER_STREAM,
  DEMO_GROUP,
  DEMO_STREAM,
} from "./demoConfig.js";
import { errorMessage, type Printer } from "./printer.js";

const SCRAPE_TIMEOUT_MS = 3000;
const GROUP_LABELS = { stream: DEMO_STREAM, group: DEMO_GROUP };
const AUDIT_LABELS = { stream: DEMO_STREAM, group: DEMO_AUDIT_GROUP };

/** Sample values from a Prometheus text exposition, summed over the label sets that match. */
function sumSamples(
  exposition: string,
  name: string,
  labels: Readonly<Record<string, string>>,
): number | undefined {
  let sum: number | undefined;
  for (const line of exposition.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$/u.exec(line);
    if (match?.[1] !== name) continue;
    const found = new Map<string, string>();
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/gu)) {
      found.set(pair[1] ?? "", pair[2] ?? "");
    }
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value)) {
      sum = (sum ?? 0) + Number(match[3]);
    }
  }
  return sum;
}

function round(value: number): string {
  return String(Math.round(value * 10) / 10);
}

type Labels = Readonly<Record<string, string>>;

/** The exposition at `httpUrl`/metrics, or undefined (said on the printer) when it cannot. */
async function scrape(printer: Printer, httpUrl: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${httpUrl}/metrics`, {
      signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS),
    });
    return await response.text();
  } catch (error) {
    printer.line("metrics", `could not scrape ${httpUrl}/metrics: ${errorMessage(error)}`);
    return undefined;
  }
}

/** Reads one exposition: samples, counters (no sample: 0), gauges with a Redis fallback. */
class ExpositionReader {
  /** Some gauge had no sample and was read from Redis. */
  fellBack = false;
  constructor(private readonly exposition: string) {}

  sample(name: string, labels: Labels = GROUP_LABELS): number | undefined {
    return sumSamples(this.exposition, `stream_janitor_${name}`, labels);
  }

  /** A counter that never moved has no sample yet, which means 0. */
  total(name: string, labels: Labels = GROUP_LABELS): string {
    return round(this.sample(`${name}_total`, labels) ?? 0);
  }

  /** The gauge's sample, or `direct` read from Redis and marked with `*`. */
  async gauge(
    name: string,
    direct: () => Promise<unknown>,
    labels: Labels = GROUP_LABELS,
  ): Promise<string> {
    const value = this.sample(name, labels);
    if (value !== undefined) return round(value);
    this.fellBack = true;
    return `${String(await direct().catch(() => "?"))}*`;
  }
}

/** The gauges the digest shows, each from /metrics or else from Redis. */
async function readGauges(reader: ExpositionReader, redis: Redis) {
  const pending = await reader.gauge("pending_entries", async () => {
    const summary = await redis.call("XPENDING", DEMO_STREAM, DEMO_GROUP);
    return Array.isArray(summary) ? Number(summary[0]) : "?";
  });
  const length = await reader.gauge("stream_length_entries", () => redis.xlen(DEMO_STREAM), {
    stream: DEMO_STREAM,
  });
  const deadLetters = await reader.gauge("dead_letter_length_entries", () =>
    redis.xlen(DEMO_DEAD_LETTER_STREAM),
  );
  const laneLength = (lane: string, labels: Labels) =>
    reader.gauge("retry_lane_length_entries", () => redis.xlen(lane), labels);
  const billingLane = await laneLength(DEMO_BILLING_LANE, GROUP_LABELS);
  const auditLane = await laneLength(DEMO_AUDIT_LANE, AUDIT_LABELS);
  return { pending, length, deadLetters, billingLane, auditLane };
}

/**
 * Scrapes /metrics the way Prometheus would and prints what an operator looks at first. A gauge
 * with no sample (this replica has not collected it) is read from Redis instead and marked, so
 * the digest stays useful and never passes a Redis read off as a metric.
 */
export async function printDigest(
  printer: Printer,
  httpUrl: string,
  redis: Redis,
  title: string,
): Promise<void> {
  const exposition = await scrape(printer, httpUrl);
  if (exposition === undefined) return;
  const reader = new ExpositionReader(exposition);
  const { pending, length, deadLetters, billingLane, auditLane } = await readGauges(reader, redis);
  const maxIdle = reader.sample("pending_max_idle_seconds");
  const lag = reader.sample("lag_entries");
  const total = (name: string, labels?: Labels): string => reader.total(name, labels);

  printer.line("metrics", `${title}, scraped from ${httpUrl}/metrics:`);
  printer.detail(
    `pending entries ${pending}` +
      (maxIdle === undefined ? "" : ` (max idle ${round(maxIdle)} s)`) +
      `, stream length ${length}` +
      (lag === undefined ? "" : `, lag ${round(lag)}`),
  );
  printer.detail(
    `totals: claimed ${total("claimed_entries")}, requeued ${total("requeued_entries")}, ` +
      `dead-lettered ${total("dead_lettered_entries")}, ghosts ${total("ghost_entries")}`,
  );
  // Copies requeued into each lane over the run; the leader trims the ones acknowledged, so
  // what is left in a lane (its length) is the work still waiting there.
  printer.detail(
    `retry lanes (requeued copies): ${DEMO_BILLING_LANE} ${total("requeued_entries")} entries, ` +
      `${DEMO_AUDIT_LANE} ${total("requeued_entries", AUDIT_LABELS)} entries; group ` +
      `${DEMO_AUDIT_GROUP}: claimed ${total("claimed_entries", AUDIT_LABELS)}, requeued ` +
      `${total("requeued_entries", AUDIT_LABELS)}; left in the lanes (not yet acknowledged): ` +
      `${billingLane}, ${auditLane}`,
  );
  printer.detail(
    `dead-letter stream length ${deadLetters}, leader ${round(reader.sample("leader", {}) ?? 0)}`,
  );
  if (reader.fellBack) printer.detail("* no sample on /metrics (yet): read from Redis directly");
}
