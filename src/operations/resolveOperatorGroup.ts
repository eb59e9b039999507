import { defaultGroupConfig } from "../config/defaultConfig.js";
import type { JanitorConfig } from "../core/configTypes.js";
import { resolveGroup, type ResolvedGroup } from "../core/resolveGroup.js";

/**
 * The settings `--stream S --group G` stand for: the configured pair's (dead-letter stream,
 * requeue target) when the configuration lists it, else the defaults of README "Configuration".
 */
export function resolveOperatorGroup(
  config: Pick<JanitorConfig, "groups">,
  stream: string,
  group: string,
): ResolvedGroup {
  const configured = config.groups.find((g) => g.stream === stream && g.group === group);
  if (configured !== undefined) return resolveGroup(configured);
  return resolveGroup(defaultGroupConfig(stream, group));
}
