import { Counter, Gauge, type Registry } from "prom-client";

/** The discovery's own metrics: how many groups the patterns found, and what they cost. */
export interface DiscoveryMetrics {
  readonly discoveredGroups: Gauge;
  readonly overCap: Counter<"pattern">;
  readonly scanFailures: Counter;
  readonly scanDurationSeconds: Gauge;
  readonly streamsMatched: Gauge;
}

export function createDiscoveryMetrics(registry: Registry): DiscoveryMetrics {
  const registers = [registry];
  return {
    discoveredGroups: new Gauge({
      name: "stream_janitor_discovered_groups",
      help: "Groups currently found by discover patterns (after listed pairs, excluded streams and discovery.maxGroups).",
      registers,
    }),
    overCap: new Counter({
      name: "stream_janitor_discovery_groups_over_cap_total",
      help: "Groups a pattern found but discovery.maxGroups left out, added up at every scan: growing means groups go unwatched.",
      labelNames: ["pattern"],
      registers,
    }),
    scanFailures: new Counter({
      name: "stream_janitor_discovery_scan_failures_total",
      help: "Discovery scans that failed; the groups of the last good scan stay in place.",
      registers,
    }),
    scanDurationSeconds: new Gauge({
      name: "stream_janitor_discovery_scan_duration_seconds",
      help: "Duration of the last successful discovery scan (SCAN of every pattern and XINFO GROUPS of every match).",
      registers,
    }),
    streamsMatched: new Gauge({
      name: "stream_janitor_discovery_streams_matched",
      help: "Streams matched by discover patterns at the last scan, excluded ones included.",
      registers,
    }),
  };
}
