import { describe, expect, it } from "vitest";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher } from "./refresherHarness.js";

const fixture = useRedisServer();

describe("stream_janitor_group_max_deliveries", () => {
  it("exports each readable group's configured maxDeliveries next to pending_max_deliveries", async () => {
    const stream = uniquePrefix("max-deliveries");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1), { deliveries: 9 });
    const monitor = groupConfig(stream, { action: "monitor", maxDeliveries: 5 });
    const missing = groupConfig(stream, { group: "missing", maxDeliveries: 3 });
    const { refresher, registry } = createTestRefresher(fixture.redis, [monitor, missing]);
    await refresher.refresh();
    const text = await registry.metrics();
    const labels = `{stream="${stream}",group="workers"}`;
    expect(text).toContain(`stream_janitor_group_max_deliveries${labels} 5\n`);
    expect(text).toContain(`stream_janitor_pending_max_deliveries${labels} 9\n`);
    // A group that cannot be read has neither (the alert compares the two).
    expect(text).not.toMatch(/stream_janitor_group_max_deliveries\{[^}]*group="missing"/u);
    expect(text).toMatch(/# TYPE stream_janitor_group_max_deliveries gauge/u);
  });
});
