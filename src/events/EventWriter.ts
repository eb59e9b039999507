import type { Logger } from "pino";
import type { EventMetrics } from "../metrics/eventMetrics.js";
import { redisNowMs } from "../redis/redisNowMs.js";

/** The event types of contract section 8. */
type EventType =
  | "dead-lettered"
  | "requeued"
  | "reassigned"
  | "ghosts"
  | "lease-acquired"
  | "lease-lost"
  | "config-reloaded"
  | "config-reload-failed"
  | "status-changed"
  | "consumers-reaped"
  | "trimmed"
  | "dlq-redriven"
  | "dlq-purged"
  | "dead-letters-dropped"
  | "retry-lane-group-recreated";

/** One advisory event; absent fields are written empty (count 0, detail {}). */
export interface AdvisoryEvent {
  type: EventType;
  /** Unix ms on the Redis clock when the caller already has it (a sweep's TIME); else read. */
  at?: number;
  stream?: string;
  group?: string;
  count?: number;
  /** Only the first MAX_EVENT_IDS are written. */
  ids?: readonly string[];
  detail?: Record<string, unknown>;
}

/** At most this many ids per event (contract section 8). */
const MAX_EVENT_IDS = 20;
/** Writes still waiting for Redis beyond this are dropped (and counted lost): memory stays bounded. */
const MAX_IN_FLIGHT = 1000;

/** The one command the writer needs (a Redis or a Cluster: plain commands, routed by key). */
interface EventsRedis {
  call(command: string, ...args: string[]): Promise<unknown>;
}

export interface EventWriterOptions {
  redis: EventsRedis;
  /** events.stream; "" turns events off. */
  streamKey: string;
  /** events.maxLen: the approximate cap (XADD MAXLEN ~). */
  maxLen: number;
  /** Who acts: an instance id (hostname:pid) or operator@host. */
  by: string;
  metrics: EventMetrics;
  logger?: Logger;
}

/**
 * Writes advisory events to the events stream, best effort: write() returns at once, never
 * throws, never retries; a write that fails is counted lost (and logged once per run of
 * failures), so an event never delays or fails the work it reports. A plain XADD outside every
 * script: on a Cluster the events stream lives in its own slot.
 */
export class EventWriter {
  readonly enabled: boolean;
  private readonly inFlight = new Set<Promise<void>>();
  private failing = false;

  constructor(private readonly options: EventWriterOptions) {
    this.enabled = options.streamKey !== "";
  }

  write(event: AdvisoryEvent): void {
    if (!this.enabled) return;
    const labels = { type: event.type };
    if (this.inFlight.size >= MAX_IN_FLIGHT) {
      this.options.metrics.eventsLost.inc(labels);
      return;
    }
    const pending: Promise<void> = this.send(event)
      .then(
        () => {
          this.failing = false;
          this.options.metrics.eventsWritten.inc(labels);
        },
        (error: unknown) => {
          this.options.metrics.eventsLost.inc(labels);
          if (!this.failing) {
            this.options.logger?.warn(
              { err: error, stream: this.options.streamKey, type: event.type },
              "could not write an advisory event (counted in stream_janitor_events_lost_total; not retried)",
            );
          }
          this.failing = true;
        },
      )
      .finally(() => this.inFlight.delete(pending));
    this.inFlight.add(pending);
  }

  /** Resolves once every write started so far has ended (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /** At shutdown: lets the last events (lease-lost) reach Redis, waiting at most `timeoutMs`. */
  async flush(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([this.settled(), timeUp]);
    clearTimeout(timer);
  }

  private async send(event: AdvisoryEvent): Promise<void> {
    await appendEvent(this.options, event);
  }
}

/**
 * One XADD of one event, awaited: what the writer sends for each write(), and what a one-shot
 * command (which waits for its event before it exits) calls itself. Rejects when Redis does.
 */
export async function appendEvent(
  target: Pick<EventWriterOptions, "redis" | "streamKey" | "maxLen" | "by">,
  event: AdvisoryEvent,
): Promise<void> {
  const { redis, streamKey, maxLen, by } = target;
  const at = event.at ?? (await redisNowMs(redis));
  await redis.call(
    "XADD",
    streamKey,
    "MAXLEN",
    "~",
    String(maxLen),
    "*",
    ...eventFields(event, at, by),
  );
}

/** The entry's fields, in the contract's order. */
function eventFields(event: AdvisoryEvent, at: number, by: string): string[] {
  return [
    "type",
    event.type,
    "at",
    String(at),
    "by",
    by,
    "stream",
    event.stream ?? "",
    "group",
    event.group ?? "",
    "count",
    String(event.count ?? 0),
    "ids",
    (event.ids ?? []).slice(0, MAX_EVENT_IDS).join(" "),
    "detail",
    JSON.stringify(event.detail ?? {}),
  ];
}
