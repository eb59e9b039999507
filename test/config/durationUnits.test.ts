import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DURATION,
  expectConfigError,
  loadContent,
  makeTempDir,
  validated,
  type TempDir,
} from "./configFiles.js";

describe("durations with units in the configuration file", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("reads every key ending in Ms, in sections and list entries, as milliseconds", async () => {
    const config = await loadContent(
      dir,
      [
        "lease: { ttlMs: 15s, renewDeadlineMs: 10s, retryPeriodMs: 2s, waitTimeoutMs: 500ms }",
        "sweep: { intervalMs: 5m, maxScriptMs: 2ms }",
        "metrics: { pelScanIntervalMs: 1m, scrapeTimeoutMs: 2500 }",
        "discovery: { intervalMs: 1h }",
        "groups: [{ stream: s, group: g, minIdleMs: 30s, reapConsumersIdleMs: 7d }]",
        'discover: [{ match: "tenant:*", minIdleMs: 2h }]',
        "retention: [{ stream: s, maxAgeMs: 1d }]",
      ].join("\n"),
    );
    expect(config.lease).toMatchObject({
      ttlMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
      waitTimeoutMs: 500,
    });
    expect(config.sweep).toMatchObject({ intervalMs: 300_000, maxScriptMs: 2 });
    expect(config.metrics).toMatchObject({ pelScanIntervalMs: 60_000, scrapeTimeoutMs: 2500 });
    expect(config.discovery.intervalMs).toBe(3_600_000);
    expect(config.groups[0]).toMatchObject({ minIdleMs: 30_000, reapConsumersIdleMs: 604_800_000 });
    expect(config.discover[0]).toMatchObject({ minIdleMs: 7_200_000 });
    expect(config.retention[0]).toMatchObject({ maxAgeMs: 86_400_000 });
  });

  it("refuses a value that is no duration, naming the key, the value and the forms", async () => {
    await expectConfigError(validated({ sweep: { intervalMs: "5 minutes" } }), {
      key: "sweep.intervalMs",
      value: "5 minutes",
      expected: DURATION,
    });
    await expectConfigError(
      validated({ groups: [{ stream: "s", group: "g", minIdleMs: "1.5s" }] }),
      { key: "groups[0].minIdleMs", value: "1.5s", expected: DURATION },
    );
    expect(DURATION).toContain("30s");
  });

  it("still applies each key's range after the unit (a lease rule, a timer's limit)", async () => {
    await expectConfigError(validated({ sweep: { intervalMs: "30d" } }), {
      key: "sweep.intervalMs",
      value: 2_592_000_000,
      expected: DURATION,
    });
  });
});
