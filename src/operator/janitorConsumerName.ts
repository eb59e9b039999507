import type { JanitorConfig } from "../config/types.js";
import { JANITOR_CONSUMER } from "../sweep/sweepOnce.js";

/**
 * The janitor's own consumer inside each group (`sweep.consumerName` when the configuration has
 * it, else the built-in name): reaping never deletes it.
 */
export function janitorConsumerName(config: Pick<JanitorConfig, "sweep">): string {
  const configured = (config.sweep as { consumerName?: unknown }).consumerName;
  return typeof configured === "string" && configured !== "" ? configured : JANITOR_CONSUMER;
}
