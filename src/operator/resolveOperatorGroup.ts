import { groupSchema } from "../config/configSchema.js";
import type { GroupConfig, JanitorConfig } from "../core/configTypes.js";
import { resolveGroup, type ResolvedGroup } from "../core/resolveGroup.js";

/**
 * The settings `--stream S --group G` stand for: the configured pair's (dead-letter stream,
 * requeue target) when the configuration lists it, else the defaults of contract section 3.
 */
export function resolveOperatorGroup(
  config: Pick<JanitorConfig, "groups">,
  stream: string,
  group: string,
): ResolvedGroup {
  const configured = config.groups.find((g) => g.stream === stream && g.group === group);
  if (configured !== undefined) return resolveGroup(configured);
  const defaults = Object.fromEntries(
    Object.entries(groupSchema).map(([key, spec]) => [key, spec.default]),
  ) as unknown as GroupConfig;
  return resolveGroup({ ...defaults, stream, group });
}
