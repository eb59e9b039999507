import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import type { RedisClient } from "../../src/redis/RedisClient.js";
import { Lease } from "../../src/lease/Lease.js";
import { FakeLeaseLock } from "../lease/FakeLeaseLock.js";
import { expectConfigError, validated } from "./configFiles.js";

// The lease timing rule follows the jitter share: with a larger share, a renewal can be sent
// later, so the deadline must leave more room. Pure constant, replaced for this file only.
vi.mock("../../src/core/jitter.js", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../../src/core/jitter.js")>()),
  JITTER_SHARE: 0.3,
}));

const lease = { ttlMs: 15000, renewDeadlineMs: 2500, retryPeriodMs: 2000 };

describe("the lease timing rule, one rule for the configuration and the Lease", () => {
  it("refuses in the configuration (exit 78, naming the key) what the Lease would refuse", async () => {
    expect(
      () =>
        new Lease({
          redis: {} as RedisClient,
          key: "k",
          ...lease,
          logger: pino({ level: "silent" }),
          lock: new FakeLeaseLock(),
        }),
    ).toThrow(/renewDeadlineMs \(2500\) must be more than 1.3 \* retryPeriodMs \(2600\)/u);
    await expectConfigError(validated({ lease }), {
      key: "lease.renewDeadlineMs",
      value: 2500,
      expected:
        "more than 1.3 * lease.retryPeriodMs (2600); " +
        "rule: ttlMs > renewDeadlineMs > 1.3 * retryPeriodMs",
    });
  });

  it("accepts in both what satisfies the rule with the larger share", async () => {
    const config = await validated({ lease: { ...lease, renewDeadlineMs: 2601 } });
    expect(config.lease.renewDeadlineMs).toBe(2601);
  });
});
