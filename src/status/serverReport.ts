import type { StatusReport } from "../core/groupStatus.js";
import type { RedisCapabilities } from "../redis/detectCapabilities.js";

/** The report's `server`: what start-up detected (nulls and {} until then), the configured mode. */
export function serverReport(
  capabilities: RedisCapabilities | undefined,
  mode: string,
): StatusReport["server"] {
  if (capabilities === undefined) return { product: null, version: null, mode, capabilities: {} };
  const { product, version, reportsDeletedIds, groupLag, consumerInactive } = capabilities;
  return {
    product,
    version,
    mode,
    capabilities: { reportsDeletedIds, groupLag, consumerInactive },
  };
}
