import { describe, expect, it } from "vitest";
import { formatEventLine, type AdvisoryEventRecord } from "../../src/events/advisoryEventRecord.js";

const base: AdvisoryEventRecord = {
  id: "1-0",
  type: "requeued",
  at: Date.UTC(2026, 11, 1, 3, 12),
  by: "janitor-0:1",
  stream: "orders",
  group: "billing",
  count: 3,
  ids: [],
  detail: {},
};

describe("formatEventLine (the `events` command's human lines)", () => {
  it("names stream/group for a group's event", () => {
    expect(formatEventLine(base)).toBe(
      "2026-12-01T03:12:00.000Z  requeued  orders/billing  count 3  by janitor-0:1",
    );
  });

  it("names the stream alone for a stream's event (trimmed), and nothing for the janitor's own", () => {
    expect(formatEventLine({ ...base, type: "trimmed", group: "" })).toBe(
      "2026-12-01T03:12:00.000Z  trimmed  orders  count 3  by janitor-0:1",
    );
    expect(
      formatEventLine({ ...base, type: "lease-acquired", stream: "", group: "", count: 0 }),
    ).toBe("2026-12-01T03:12:00.000Z  lease-acquired  by janitor-0:1");
  });
});
