import { backlogOf } from "./backlogOf.js";
import { MinuteRings } from "./MinuteRings.js";
import type { StatusSample } from "./StatusSample.js";

/** What is kept per group and minute: four levels from the samples, three rates from sweeps. */
const HISTORY_SERIES = [
  "lag",
  "backlog",
  "pending",
  "deadLetters",
  "claimed",
  "requeued",
  "deadLettered",
] as const;

export type HistorySeries = (typeof HISTORY_SERIES)[number];

const INDEX = new Map<HistorySeries, number>(HISTORY_SERIES.map((name, index) => [name, index]));
const RATES = [4, 5, 6];

function indexOf(series: HistorySeries): number {
  return INDEX.get(series) ?? 0;
}

/** One group's points, oldest first (NaN: not known), for the console to draw. */
export interface HistoryView {
  /** The window, in one-minute points. */
  minutes: number;
  /** End of the last point's minute is at or after this (the latest sample's time). */
  endMs: number;
  /** Start of the oldest minute kept: later than endMs - window after a restart. */
  sinceMs: number;
  series: Record<HistorySeries, Float32Array>;
}

/** What the console reads (src/ui): one series for the overview, all of them for a group page. */
export interface HistoryBoard {
  readonly minutes: number;
  seriesOf(groupId: string, series: HistorySeries, endMs: number): Float32Array | undefined;
  viewOf(groupId: string, endMs: number): HistoryView | undefined;
}

/** One group's sweep, as the Supervisor's outcomes carry it (src/sweep/GroupSweepResult.ts). */
interface SweepCounts {
  stream: string;
  group: string;
  claimed: number;
  requeued: number;
  deadLettered: number;
}

/** The Supervisor's typed outcomes (src/daemon/SupervisorEvents.ts) the history listens to. */
interface SweepOutcomes {
  on(
    event: "group-swept" | "group-failed",
    listener: (result: SweepCounts, wallClockMs: number, redisClockMs: number) => void,
  ): unknown;
}

/**
 * The last `minutes` of each group, in memory only (README "Web console", history): every
 * replica records its status samples (lag, backlog, pending, dead letters: the minute's last
 * known value); the leader also adds its sweeps' claimed, requeued and dead-lettered counts per
 * minute, and a minute it sampled while leading counts 0 until a sweep adds to it, so a quiet
 * group draws 0 and a standby draws nothing (it does not sweep). All minutes are the Redis
 * clock's (the samples' and the sweeps' `redisClockMs`). Nothing survives a restart: the view's
 * sinceMs says since when it is kept.
 */
export class GroupHistory implements HistoryBoard {
  private readonly rings: MinuteRings;

  constructor(readonly minutes: number) {
    this.rings = new MinuteRings(HISTORY_SERIES.length, minutes);
  }

  /** One status sample of a group (an unreadable one leaves its minute unknown). */
  recordSample(groupId: string, sample: StatusSample, leading: boolean): void {
    if (!sample.readable) return;
    const { atMs } = sample;
    const set = (series: HistorySeries, value: number | null): void => {
      if (value !== null) this.rings.set(groupId, indexOf(series), atMs, value);
    };
    set("lag", sample.lag);
    set("backlog", backlogOf(sample));
    set("pending", sample.pending);
    set("deadLetters", sample.deadLetters);
    if (leading) for (const rate of RATES) this.rings.add(groupId, rate, atMs, 0);
  }

  /** One group's sweep, at Redis TIME when its pass ended. */
  recordSweep(result: SweepCounts, redisClockMs: number): void {
    // The group's id as resolveGroup makes it (src/core/resolveGroup.ts).
    const id = `${result.stream}/${result.group}`;
    this.rings.add(id, indexOf("claimed"), redisClockMs, result.claimed);
    this.rings.add(id, indexOf("requeued"), redisClockMs, result.requeued);
    this.rings.add(id, indexOf("deadLettered"), redisClockMs, result.deadLettered);
  }

  /** The leader's sweeps, as they end (a failed one counts what it did before failing). */
  follow(supervisor: SweepOutcomes): void {
    const record = (result: SweepCounts, _wallClockMs: number, redisClockMs: number): void =>
      this.recordSweep(result, redisClockMs);
    supervisor.on("group-swept", record);
    supervisor.on("group-failed", record);
  }

  /** The current groups: the others' rings are freed. */
  keepOnly(groupIds: ReadonlySet<string>): void {
    this.rings.keepOnly(groupIds);
  }

  seriesOf(groupId: string, series: HistorySeries, endMs: number): Float32Array | undefined {
    return this.rings.read(groupId, indexOf(series), endMs);
  }

  viewOf(groupId: string, endMs: number): HistoryView | undefined {
    const sinceMs = this.rings.sinceMs(groupId);
    if (sinceMs === undefined) return undefined;
    const series = {} as Record<HistorySeries, Float32Array>;
    for (const name of HISTORY_SERIES) {
      series[name] = this.rings.read(groupId, indexOf(name), endMs) ?? new Float32Array();
    }
    return { minutes: this.minutes, endMs, sinceMs, series };
  }

  get groups(): number {
    return this.rings.size;
  }

  /** Bytes of the points (the typed arrays), for the figure the README states. */
  pointBytes(): number {
    return this.rings.pointBytes();
  }
}
