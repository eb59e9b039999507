import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { GroupChange, GroupSet } from "../core/GroupSet.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import {
  combineGroups,
  scanDiscoverPatterns,
  type DiscoveryInput,
  type DiscoveryScan,
} from "./discoverGroups.js";
import { createDiscoveryMetrics, type DiscoveryMetrics } from "../metrics/discoveryMetrics.js";
import type { ScanNodes } from "./scanNodes.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { PeriodicTask } from "../core/PeriodicTask.js";
import { backgroundTimers, type Timers } from "../core/timers.js";
import { outageField } from "../redis/outageField.js";

export interface DiscoveryOptions {
  nodes: ScanNodes;
  /** On Cluster, the client that follows redirections (see scanDiscoverPatterns). */
  follow?: RedisClient;
  /** The daemon's list of groups: discovery installs listed + discovered groups into it. */
  groupSet: GroupSet;
  config: DiscoveryInput;
  logger: Logger;
  registry: Registry;
  /** Monotonic ms, for the scan duration. */
  now?: () => number;
  /** The scans' timer; backgroundTimers (discovery keeps no process alive) unless given. */
  timers?: Timers;
}

/** At most this many ids in one log line about groups that came or went. */
const MAX_LOGGED_IDS = 20;

/**
 * Keeps the daemon's GroupSet equal to the listed groups plus what the `discover` patterns find,
 * re-scanning every discovery.intervalMs. A failed scan keeps the last good list (an outage must
 * not make every group vanish and lose its counters). discoverOnce() is the scan itself, public
 * so tests drive it without timers; scans never overlap, each call runs a fresh one.
 */
export class Discovery {
  private readonly options: DiscoveryOptions;
  private readonly metrics: DiscoveryMetrics;
  private readonly log: Logger;
  private readonly now: () => number;
  private config: DiscoveryInput;
  private discovered: readonly ResolvedGroup[] = [];
  /** Its scans, timed or asked for: one at a time, each call a fresh one after those before. */
  private readonly loop: PeriodicTask<DiscoveryScan | undefined>;
  private lastFailure = "";
  /** The groups left out for a role collision, as last logged. */
  private lastRefused = "[]";

  constructor(options: DiscoveryOptions) {
    this.options = options;
    this.config = options.config;
    this.metrics = createDiscoveryMetrics(options.registry);
    this.metrics.discoveredGroups.set(0);
    this.log = options.logger.child({ component: "discovery" });
    this.now = options.now ?? (() => performance.now());
    this.loop = new PeriodicTask({
      run: () => this.scanAndApply(),
      nextDelayMs: () => this.nextDelayMs(),
      onError: () => undefined, // scanAndApply() never rejects
      timers: options.timers ?? backgroundTimers,
      overlap: "queue",
    });
  }

  /** The groups the last good scan found (listed ones not included). */
  get current(): readonly ResolvedGroup[] {
    return this.discovered;
  }

  /** Runs the first scan now and resolves when it is done (never rejects); then every interval. */
  async start(): Promise<void> {
    if (this.loop.state !== "idle") return;
    this.loop.start(undefined);
    await this.discoverOnce();
    this.loop.reschedule(this.nextDelayMs());
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * A reload: listed groups take effect at once (a pair now listed leaves the discovered ones);
   * changed patterns are re-scanned right away, the old discovered groups staying until then.
   */
  reconfigure(next: DiscoveryInput): GroupChange | undefined {
    const before = this.config;
    const rescan =
      JSON.stringify(next.discover) !== JSON.stringify(before.discover) ||
      next.discovery.maxGroups !== before.discovery.maxGroups;
    const reschedule = rescan || next.discovery.intervalMs !== before.discovery.intervalMs;
    this.config = next;
    const listed = new Set(combineGroups(next, []).map((group) => group.id));
    this.discovered = this.discovered.filter((group) => !listed.has(group.id));
    const change = this.install();
    if (this.loop.state === "running") {
      if (rescan) void this.discoverOnce();
      if (reschedule) this.loop.reschedule(this.nextDelayMs());
    }
    return change;
  }

  /** One scan of every pattern, applied to the GroupSet; undefined when it failed (logged, counted). */
  discoverOnce(): Promise<DiscoveryScan | undefined> {
    return this.loop.runOnce();
  }

  private async scanAndApply(): Promise<DiscoveryScan | undefined> {
    if (this.loop.signal.aborted) return undefined;
    const config = this.config;
    const startedAt = this.now();
    const scan = await this.scan(config);
    // A reload during the scan: its result answers the old patterns; the reload queued a new one.
    if (scan === undefined || config !== this.config) return scan;
    this.metrics.scanDurationSeconds.set((this.now() - startedAt) / 1000);
    this.metrics.streamsMatched.set(scan.streamsMatched);
    this.reportLeftOut(scan, config);
    this.discovered = scan.discovered;
    this.logChange(this.install());
    return scan;
  }

  /** One scan of the patterns; undefined when it failed (counted, logged once per message). */
  private async scan(config: DiscoveryInput): Promise<DiscoveryScan | undefined> {
    try {
      const scan = await scanDiscoverPatterns(this.options.nodes, config, this.options.follow);
      this.lastFailure = "";
      return scan;
    } catch (error) {
      this.metrics.scanFailures.inc();
      const message = error instanceof Error ? error.message : String(error);
      if (message !== this.lastFailure) {
        this.log.error(
          { err: outageField(error) },
          "discovery scan failed; the groups found before stay",
        );
      }
      this.lastFailure = message;
      return undefined;
    }
  }

  /** Groups the scan found but left out: over discovery.maxGroups, or refused for their keys. */
  private reportLeftOut(scan: DiscoveryScan, config: DiscoveryInput): void {
    for (const [pattern, count] of scan.overCap) {
      this.metrics.overCap.inc({ pattern }, count);
    }
    if (scan.overCap.size > 0) {
      this.log.warn(
        {
          patterns: Object.fromEntries(scan.overCap),
          maxGroups: config.discovery.maxGroups,
          found: scan.candidates,
        },
        `discovery.maxGroups reached: groups matched by ${[...scan.overCap.keys()].join(", ")} are not watched (the first ${config.discovery.maxGroups} by stream/group name are)`,
      );
    }
    // Said once per change of the set, not at every scan.
    const refused = JSON.stringify(scan.refused);
    if (refused !== this.lastRefused && scan.refused.length > 0) {
      this.log.warn(
        { refusedCount: scan.refused.length, refused: scan.refused.slice(0, MAX_LOGGED_IDS) },
        "discovered groups left out: one of their keys would take another key's role",
      );
    }
    this.lastRefused = refused;
  }

  /** Logs a change of the discovered groups (not every scan's unchanged result). */
  private logChange(change: GroupChange | undefined): void {
    if (change === undefined || (change.added.length === 0 && change.removed.length === 0)) return;
    const ids = (groups: readonly ResolvedGroup[]): string[] =>
      groups.slice(0, MAX_LOGGED_IDS).map((group) => group.id);
    this.log.info(
      {
        discovered: this.discovered.length,
        addedCount: change.added.length,
        removedCount: change.removed.length,
        added: ids(change.added),
        removed: ids(change.removed),
      },
      "discovered groups changed",
    );
  }

  private install(): GroupChange | undefined {
    this.metrics.discoveredGroups.set(this.discovered.length);
    return this.options.groupSet.replace(combineGroups(this.config, this.discovered));
  }

  /** Without patterns there is nothing to look for; a reload that adds some schedules again. */
  private nextDelayMs(): number | undefined {
    return this.config.discover.length === 0 ? undefined : this.config.discovery.intervalMs;
  }
}
