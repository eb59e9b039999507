import type { Logger } from "pino";
import type { JanitorConfig } from "../core/configTypes.js";
import {
  GROUP_STATUSES,
  type GroupStatusReport,
  type StatusBoard,
  type StatusReport,
} from "../core/groupStatus.js";
import { withJitter } from "../core/jitter.js";
import { PeriodicTask } from "../core/PeriodicTask.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { backgroundTimers, type Timers } from "../core/timers.js";
import type { StatusMetrics } from "../metrics/statusMetrics.js";
import type { RedisCapabilities } from "../redis/detectCapabilities.js";
import { RedisUnavailableError } from "../redis/pipeline/runPipeline.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { PelScanResult } from "../scrape/scanGroupPel.js";
import { readGroupSnapshots } from "../scrape/readGroupSnapshots.js";
import { announceStatus, type AnnounceTo } from "./announceStatus.js";
import { checkLagBacked, type LagCheck } from "./checkLagBacked.js";
import { judgeGroup, type Verdict } from "./judgeGroup.js";
import { sampleOf } from "./sampleOf.js";
import { sampleReport } from "./sampleReport.js";
import { serverReport } from "./serverReport.js";
import type { ReadableSample, StatusSample } from "./StatusSample.js";
import type { GroupHistory } from "./GroupHistory.js";
import { outageField } from "../redis/outageField.js";

export interface StatusSamplerOptions extends AnnounceTo {
  /** Its own connection or the scrape's: the reads are the scrape's, plus XINFO CONSUMERS. */
  redis: RedisClient;
  groups: readonly ResolvedGroup[];
  config: Pick<JanitorConfig, "status" | "sweep" | "metrics" | "redis">;
  metrics: StatusMetrics;
  /** The scrape's PEL scans by group id (due entries); an empty map is fine. */
  pelScans: ReadonlyMap<string, PelScanResult>;
  /** This replica's instance id and current fencing token (null when not the leader). */
  instance: string;
  fencingToken: () => number | null;
  timers?: Timers;
  random?: () => number;
  /** Where each sample is also kept for the console's charts (README "Web console"). */
  history?: Pick<GroupHistory, "recordSample" | "keepOnly">;
}

/** One group's window and verdict; the labels object is kept so its text is made once. */
interface GroupTrack {
  group: ResolvedGroup;
  samples: StatusSample[];
  verdict: Verdict | undefined;
  report: GroupStatusReport | undefined;
  labels: Readonly<{ stream: string; group: string }>;
  /** The stream's answer for the latest stall candidate's read position (checkLagBacked). */
  lagCheck?: LagCheck;
}

function labelsOf(group: ResolvedGroup): GroupTrack["labels"] {
  return Object.freeze({ stream: group.stream, group: group.group });
}

/**
 * The group status (README "Group status") on every replica: every status.intervalMs (jittered,
 * never overlapping) one body-free read of every group (readGroupSnapshots with `consumers`), the
 * last status.window samples per group, a verdict each (judgeGroup), the one-hot
 * stream_janitor_group_status and the changes announced. An outage is not a verdict: the
 * previous ones stay and the report says `redis: "unreachable"`. sampleOnce() is one round.
 */
export class StatusSampler implements StatusBoard {
  private readonly options: StatusSamplerOptions;
  private readonly log: Logger;
  private readonly announceTo: AnnounceTo;
  private readonly loop: PeriodicTask<void>;
  private readonly tracks = new Map<string, GroupTrack>();
  private groups: readonly ResolvedGroup[] = [];
  private capabilities: RedisCapabilities | undefined;
  private generatedAt = 0;
  private unreachable = false;

  constructor(options: StatusSamplerOptions) {
    this.options = options;
    this.log = options.logger.child({ component: "status" });
    this.announceTo = { ...options, logger: this.log };
    this.setGroups(options.groups);
    const { intervalMs } = options.config.status;
    this.loop = new PeriodicTask({
      run: () => this.sample(),
      nextDelayMs: () => withJitter(intervalMs, options.random ?? Math.random),
      onError: (error) => this.log.error({ err: error }, "status sample failed"),
      timers: options.timers ?? backgroundTimers,
    });
  }

  /** First sample right away. */
  start(): void {
    this.loop.start(0);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** What the server is (the report's `server`), once detected. */
  setCapabilities(capabilities: RedisCapabilities): void {
    this.capabilities = capabilities;
  }

  /** A new list of groups: gone ones lose their window, verdict and series at once. */
  setGroups(groups: readonly ResolvedGroup[]): void {
    this.groups = groups;
    const ids = new Set(groups.map((group) => group.id));
    for (const id of this.tracks.keys()) if (!ids.has(id)) this.tracks.delete(id);
    this.options.history?.keepOnly(ids);
    for (const group of groups) {
      const track = this.tracks.get(group.id);
      if (track === undefined || track.group !== group) {
        this.tracks.set(group.id, {
          group,
          samples: track?.samples ?? [],
          verdict: track?.verdict,
          report: track?.report,
          labels: labelsOf(group),
          // Discovery hands over new group objects at each scan: the stream's answer still holds.
          ...(track?.lagCheck === undefined ? {} : { lagCheck: track.lagCheck }),
        });
      }
    }
    this.exportMetric();
  }

  /** One sample of every group and their verdicts. Concurrent calls share one round. */
  sampleOnce(): Promise<void> {
    return this.loop.runOnce();
  }

  report(): StatusReport {
    const fencingToken = this.options.fencingToken();
    const groups: GroupStatusReport[] = [];
    for (const group of this.groups) {
      const report = this.tracks.get(group.id)?.report;
      if (report !== undefined) groups.push(report);
    }
    return {
      generatedAt: this.generatedAt,
      ...(this.unreachable ? { redis: "unreachable" as const } : {}),
      leader: { isLeader: this.options.isLeader(), instance: this.options.instance, fencingToken },
      server: serverReport(this.capabilities, this.options.config.redis.mode),
      sampling: {
        intervalMs: this.options.config.status.intervalMs,
        window: this.options.config.status.window,
      },
      groups,
    };
  }

  statusOf(groupId: string): GroupStatusReport | undefined {
    return this.tracks.get(groupId)?.report;
  }

  private async sample(): Promise<void> {
    const { config } = this.options;
    const groups = this.groups;
    let snapshot;
    try {
      snapshot = await readGroupSnapshots(this.options.redis, groups, {
        timeoutMs: config.metrics.scrapeTimeoutMs,
        perConsumer: false,
        consumers: { janitorConsumer: config.sweep.consumerName },
      });
    } catch (error) {
      // An outage is not a verdict: every group keeps its own, and the report says why.
      if (!this.unreachable) {
        const level = error instanceof RedisUnavailableError ? "warn" : "error";
        this.log[level](
          { err: outageField(error) },
          "status not sampled: the verdicts stay as they were",
        );
      }
      this.unreachable = true;
      return;
    }
    if (this.unreachable) this.log.info("status sampled again");
    this.unreachable = false;
    this.generatedAt = snapshot.nowMs;
    for (const reading of snapshot.groups) {
      const track = this.tracks.get(reading.group.id);
      const scan = this.options.pelScans.get(reading.group.id);
      const read = sampleOf(reading, snapshot.nowMs, scan, this.capabilities?.groupLag);
      if (track === undefined || read === undefined) continue;
      const sample = read.readable ? await this.backedByStream(track, read) : read;
      track.samples.push(sample);
      // Bounded memory: the window and nothing more.
      if (track.samples.length > config.status.window) track.samples.shift();
      this.options.history?.recordSample(reading.group.id, sample, this.options.isLeader());
      this.judge(track, sample);
    }
    this.exportMetric();
  }

  /** See checkLagBacked; the stream's answer is kept while the read position holds. */
  private async backedByStream(track: GroupTrack, sample: ReadableSample): Promise<ReadableSample> {
    const previous = track.samples.at(-1);
    const input = { previous, sample, known: track.lagCheck, log: this.log };
    const checked = await checkLagBacked(this.options.redis, track.group.stream, input);
    track.lagCheck = checked.check;
    return checked.sample;
  }

  private judge(track: GroupTrack, sample: StatusSample): void {
    const { group } = track;
    const configured = this.options.config.status;
    const verdict = judgeGroup(track.samples, {
      stuckAfterMs: configured.stuckAfterMs > 0 ? configured.stuckAfterMs : 10 * group.minIdleMs,
      seenWithinMs: configured.intervalMs * configured.window,
      readAttemptsReported: this.capabilities?.consumerInactive ?? true,
    });
    const before = track.report;
    const changed = before === undefined || before.status !== verdict.status;
    const report: GroupStatusReport = {
      stream: group.stream,
      group: group.group,
      status: verdict.status,
      reason: verdict.reason,
      since: changed ? sample.atMs : before.since,
      sample: sampleReport(sample),
    };
    if (changed) {
      const first = track.verdict === undefined || track.verdict.provisional === true;
      announceStatus(
        { previous: first ? undefined : before, next: report, atMs: sample.atMs },
        this.announceTo,
      );
    }
    track.verdict = verdict;
    track.report = report;
  }

  /** One-hot per group with a verdict; groups gone (or not sampled yet) have no series. */
  private exportMetric(): void {
    const gauge = this.options.metrics.groupStatus;
    gauge.reset();
    for (const track of this.tracks.values()) {
      const status = track.report?.status;
      if (status === undefined) continue;
      for (const name of GROUP_STATUSES) gauge.setWith(track.labels, name, name === status ? 1 : 0);
    }
  }
}
