import { ConfigError, type ConfigProblems } from "./ConfigError.js";
import type { JanitorConfig } from "../core/configTypes.js";

/**
 * The advisory events stream is the janitor's own output (README "Configuration", `events.*`): never swept, never
 * trimmed by `retention` (its cap is events.maxLen). Listing it as either is a mistake to report,
 * not to carry out. (Discovery leaves it out by itself.)
 */
export function checkEventsStream(
  config: Pick<JanitorConfig, "events" | "groups" | "retention">,
  problems: ConfigProblems,
): void {
  const eventsStream = config.events.stream;
  if (eventsStream === "") return;
  config.groups.forEach((group, index) => {
    if (group.stream !== eventsStream) return;
    const expected = "a stream other than events.stream (the janitor's own events are never swept)";
    problems.add(new ConfigError(`groups[${index}].stream`, group.stream, expected));
  });
  config.retention.forEach((entry, index) => {
    if (entry.stream !== eventsStream) return;
    const expected = "a stream other than events.stream (capped by events.maxLen instead)";
    problems.add(new ConfigError(`retention[${index}].stream`, entry.stream, expected));
  });
}
