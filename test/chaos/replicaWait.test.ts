import { describe, expect, it } from "vitest";
import { waitRemark } from "./replicaWait.js";

const late = (ports: number[]) => `no replica of ${ports.join(", ")} acknowledged within 30 ms`;

describe("a fault's remark on its WAITs (pure logic)", () => {
  it("says nothing when every replica acknowledged", () => {
    const acks = new Map([[7000, { acked: true }]]);
    expect(waitRemark(acks, late)).toBe("");
  });

  it("tells the masters not acknowledged within the wait from the WAITs that failed", () => {
    const acks = new Map([
      [7000, { acked: true }],
      [7001, { acked: false }],
      [7002, { acked: false, failure: "Connection is closed." } as const],
      [7003, { acked: false }],
    ]);
    expect(waitRemark(acks, late)).toBe(
      "; no replica of 7001, 7003 acknowledged within 30 ms" +
        "; WAIT on 7002 failed: Connection is closed.",
    );
  });
});
