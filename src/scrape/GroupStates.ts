import type { Logger } from "pino";
import type { GroupReading } from "./GroupReading.js";

/**
 * Remembers whether each group could be read, and logs only the changes, at warn: a typo in a
 * stream or group name must be visible (stream_janitor_group_readable says it to Prometheus),
 * but a missing stream is read at every scrape, and one line per scrape would drown the rest.
 */
export class GroupStates {
  private readonly states = new Map<string, string>();
  private readonly log: Logger;

  constructor(logger: Logger) {
    this.log = logger;
  }

  record(readings: readonly GroupReading[]): void {
    for (const reading of readings) {
      const { group } = reading;
      const previous = this.states.get(group.id);
      if (previous === reading.state) continue;
      this.states.set(group.id, reading.state);
      // The first sight of a healthy group is not news.
      if (previous === undefined && reading.state === "ok") continue;
      const level = reading.state === "ok" ? "info" : "warn";
      this.log[level](
        {
          stream: group.stream,
          group: group.group,
          state: reading.state,
          previous: previous ?? "unknown",
          ...(reading.state === "ok" ? {} : { detail: reading.detail }),
        },
        reading.state === "ok"
          ? "group readable again: its gauges are back"
          : "group not readable: its gauges have no samples",
      );
    }
  }
}
