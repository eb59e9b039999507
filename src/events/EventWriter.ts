import { backgroundTimers } from "../core/timers.js";
import { withTimeout } from "../core/withTimeout.js";
import type { Logger } from "pino";
import type { EventMetrics } from "../metrics/eventMetrics.js";
import { redisNowMs } from "../redis/redisNowMs.js";
import { runAppendEvents, type EncodedEvent } from "../scripts/appendEvents.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { outageField } from "../redis/outageField.js";

/** The event types (README "Configuration", `events.*`). */
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
  | "retry-lane-group-recreated"
  | "task-started"
  | "task-finished"
  | "ui-action";

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

/** At most this many ids per event: an event stays small however many entries it counts. */
const MAX_EVENT_IDS = 20;
/**
 * Events not yet answered by Redis (queued or in the call in flight) beyond this are dropped and
 * counted lost: memory stays bounded (an event is at most about 1 KB once encoded). While Redis
 * answers, batches drain far faster than the sweep makes events, so only a Redis that does not
 * answer (for about 4 s at 5,000 events/s) lets the queue reach it.
 */
const MAX_WAITING = 20_000;
/**
 * Events per script call: 100 events of 20 ids each took 0.87 ms of Redis time per call (200:
 * 2.2 ms), within the 2 ms a sweep script is allowed by default.
 */
const MAX_BATCH = 100;

export interface EventWriterOptions {
  redis: ScriptedRedis;
  /** events.stream; "" turns events off. */
  streamKey: string;
  /** events.maxLen: the approximate cap (XADD MAXLEN ~). */
  maxLen: number;
  /** Who acts: an instance id (hostname:pid) or operator@host. */
  by: string;
  metrics: EventMetrics;
  logger?: Logger;
  /** Tests: the cap on events not yet answered (default MAX_WAITING). */
  maxWaiting?: number;
}

/**
 * Writes advisory events to the events stream, best effort: write() returns at once, never
 * throws, never retries; a write that fails is counted lost (and logged once per run of
 * failures), so an event never delays or fails the work it reports. Events queue in memory and
 * go in batches, one script call at a time (appendEvents.lua, one round trip per batch, in the
 * order written): what piles up while a call is in flight goes in the next. On a Cluster the
 * events stream lives in its own slot, outside every sweep script.
 */
export class EventWriter {
  readonly enabled: boolean;
  private readonly maxWaiting: number;
  private queue: EncodedEvent[] = [];
  /** Queued plus in the call in flight. */
  private waiting = 0;
  private draining: Promise<void> | undefined;
  private failing = false;

  constructor(private readonly options: EventWriterOptions) {
    this.enabled = options.streamKey !== "";
    this.maxWaiting = options.maxWaiting ?? MAX_WAITING;
  }

  write(event: AdvisoryEvent): void {
    if (!this.enabled) return;
    if (this.waiting >= this.maxWaiting) {
      this.options.metrics.eventsLost.inc({ type: event.type });
      return;
    }
    this.queue.push(encodeEvent(event));
    this.waiting += 1;
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  /** Resolves once every write started so far has ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
  }

  /** At shutdown: lets the last events (lease-lost) reach Redis, waiting at most `timeoutMs`. */
  async flush(timeoutMs: number): Promise<void> {
    // Background timers: the wait must not keep a stopping process alive.
    await withTimeout(this.settled(), timeoutMs, () => undefined, backgroundTimers);
  }

  /** Sends the queue batch after batch until it is empty; never rejects. */
  private async drain(): Promise<void> {
    // The writes of the current task join the first batch.
    await Promise.resolve();
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      await this.send(batch);
      this.waiting -= batch.length;
    }
  }

  private async send(batch: EncodedEvent[]): Promise<void> {
    const { metrics, redis, streamKey, maxLen, by } = this.options;
    try {
      await runAppendEvents(redis, { streamKey, maxLen, by, events: batch });
      this.failing = false;
      for (const [type] of batch) metrics.eventsWritten.inc({ type });
    } catch (error) {
      for (const [type] of batch) metrics.eventsLost.inc({ type });
      if (!this.failing) {
        this.options.logger?.warn(
          { err: outageField(error), stream: streamKey, events: batch.length },
          "could not write advisory events (counted in stream_janitor_events_lost_total; not retried)",
        );
      }
      this.failing = true;
    }
  }
}

/** An event as the script takes it: the ids cut to MAX_EVENT_IDS, an absent at left to Redis. */
function encodeEvent(event: AdvisoryEvent): EncodedEvent {
  return [
    event.type,
    event.at === undefined ? "" : String(event.at),
    event.stream ?? "",
    event.group ?? "",
    String(event.count ?? 0),
    (event.ids ?? []).slice(0, MAX_EVENT_IDS).join(" "),
    JSON.stringify(event.detail ?? {}),
  ];
}

/** A Redis or a Cluster: plain commands, routed by key. */
interface CommandRedis {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** The events stream's field names, in the README's order (the script writes the same). */
const FIELD_NAMES = ["type", "at", "stream", "group", "count", "ids", "detail"] as const;

/**
 * One XADD of one event, awaited: what a one-shot command (which waits for its event before it
 * exits) calls itself. Rejects when Redis does.
 */
export async function appendEvent(
  target: { redis: CommandRedis } & Pick<EventWriterOptions, "streamKey" | "maxLen" | "by">,
  event: AdvisoryEvent,
): Promise<void> {
  const { redis, streamKey, maxLen, by } = target;
  const at = event.at ?? (await redisNowMs(redis));
  const values = encodeEvent({ ...event, at });
  const fields = FIELD_NAMES.flatMap((name, i) => [name, values[i] ?? ""]);
  // by comes third, after type and at.
  fields.splice(4, 0, "by", by);
  await redis.call("XADD", streamKey, "MAXLEN", "~", String(maxLen), "*", ...fields);
}
