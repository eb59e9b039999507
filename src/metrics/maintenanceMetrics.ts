import { Counter, Gauge, type Registry } from "prom-client";

/**
 * The metrics of the daemon's maintenance work (consumer reaping, safe retention), contract
 * section 5. Counters move only on the leader, like the sweep counters.
 */
export interface MaintenanceMetrics {
  readonly consumersReaped: Counter<"stream" | "group">;
  readonly trimmedEntries: Counter<"stream">;
  readonly retentionBlocked: Gauge<"stream" | "group">;
}

export function createMaintenanceMetrics(registry: Registry): MaintenanceMetrics {
  const registers = [registry];
  return {
    consumersReaped: new Counter({
      name: "stream_janitor_consumers_reaped_total",
      help: "Consumers deleted by reaping (groups[].reapConsumersIdleMs): they owned nothing and were inactive that long.",
      labelNames: ["stream", "group"],
      registers,
    }),
    trimmedEntries: new Counter({
      name: "stream_janitor_trimmed_entries_total",
      help: "Entries removed by safe trimming (retention): never one a group still needs.",
      labelNames: ["stream"],
      registers,
    }),
    retentionBlocked: new Gauge({
      name: "stream_janitor_retention_blocked",
      help: "1 while this group holds the stream's retention back: the policy wants entries removed that the group has not read or acknowledged yet; else 0.",
      labelNames: ["stream", "group"],
      registers,
    }),
  };
}
