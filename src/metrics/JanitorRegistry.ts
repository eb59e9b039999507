import { Registry } from "prom-client";
import { GroupGauge } from "./GroupGauge.js";

type RenderOne = (this: Registry, metric: unknown) => Promise<string>;

/**
 * prom-client's per-family renderer. It is not in the typings but is what `metrics()` calls for
 * each family (prom-client is pinned to an exact version, and test/metrics/JanitorRegistry.test.ts
 * compares both renderings, so a change there fails a test instead of the scrape).
 */
const renderOne = (Registry.prototype as unknown as { getMetricsAsString: RenderOne })
  .getMetricsAsString;

/**
 * The daemon's registry: the same text as prom-client's, but the per-group gauge families
 * (GroupGauge) render themselves, with the label text of each group formatted once for the
 * life of the process instead of once per sample per scrape. With 1,000 groups that is about
 * 10,000 of the 18,000 lines of a scrape.
 */
export class JanitorRegistry extends Registry {
  getMetricsAsString(metric: unknown): Promise<string> {
    if (metric instanceof GroupGauge) return Promise.resolve(metric.render());
    return renderOne.call(this, metric);
  }
}
