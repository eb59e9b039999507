import type { JanitorConfig } from "./configTypes.js";

/** The janitor's own consumer inside each group (`sweep.consumerName`): reaping never deletes it. */
export function janitorConsumerName(config: Pick<JanitorConfig, "sweep">): string {
  return config.sweep.consumerName;
}
