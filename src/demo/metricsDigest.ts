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
  let exposition: string;
  try {
    const response = await fetch(`${httpUrl}/metrics`, {
      signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS),
    });
    exposition = await response.text();
  } catch (error) {
    printer.line("metrics", `could not scrape ${httpUrl}/metrics: ${errorMessage(error)}`);
    return;
  }
  const sample = (name: string, labels: Readonly<Record<string, string>> = GROUP_LABELS) =>
    sumSamples(exposition, `stream_janitor_${name}`, labels);
  // A counter that never moved has no sample yet, which means 0.
  const total = (name: string, labels = GROUP_LABELS): string =>
    round(sample(`${name}_total`, labels) ?? 0);
  let fellBack = false;
  const gauge = async (
    name: string,
    direct: () => Promise<unknown>,
    labels: Readonly<Record<string, string>> = GROUP_LABELS,
  ): Promise<string> => {
    const value = sample(name, labels);
    if (value !== undefined) return round(value);
    fellBack = true;
    return `${String(await direct().catch(() => "?"))}*`;
  };

  const pending = await gauge("pending_entries", async () => {
    const summary = await redis.call("XPENDING", DEMO_STREAM, DEMO_GROUP);
    return Array.isArray(summary) ? Number(summary[0]) : "?";
  });
  const length = await gauge("stream_length_entries", () => redis.xlen(DEMO_STREAM), {
    stream: DEMO_STREAM,
  });
  const deadLetters = await gauge("dead_letter_length_entries", () =>
    redis.xlen(DEMO_DEAD_LETTER_STREAM),
  );
  const laneLength = (lane: string, labels: Readonly<Record<string, string>>) =>
    gauge("retry_lane_length_entries", () => redis.xlen(lane), labels);
  const billingLane = await laneLength(DEMO_BILLING_LANE, GROUP_LABELS);
  const auditLane = await laneLength(DEMO_AUDIT_LANE, AUDIT_LABELS);
  const maxIdle = sample("pending_max_idle_seconds");
  const lag = sample("lag_entries");

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
    `dead-letter stream length ${deadLetters}, leader ${round(sample("leader", {}) ?? 0)}`,
  );
  if (fellBack) printer.detail("* no sample on /metrics (yet): read from Redis directly");
}
