import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultRetryLaneStream, resolveGroup } from "../../src/core/resolveGroup.js";
import { keySlot } from "../../src/core/keySlot.js";
import {
  expectConfigError,
  loadOrValidate,
  makeTempDir,
  withGroup,
  type TempDir,
} from "./configFiles.js";

const GROUP = {
  stream: "orders",
  group: "billing",
  minIdleMs: 1,
  maxDeliveries: 3,
  action: "requeue" as const,
  requeueStream: "",
  deadLetterStream: "",
  deadLetterMaxLen: 0,
};

describe("retryLane: configuration and naming", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });
  const load = (content: object) => loadOrValidate(dir, content, {});

  it("reads retryLane, false by default", async () => {
    const config = await load(withGroup({ retryLane: true }));
    expect(config.groups[0]?.retryLane).toBe(true);
    expect((await load(withGroup({}))).groups[0]?.retryLane).toBe(false);
    const patterns = await load({ discover: [{ match: "t:*", retryLane: true }] });
    expect(patterns.discover[0]?.retryLane).toBe(true);
  });

  it.each(["reassign", "dead-letter", "monitor"])(
    "refuses retryLane with action %s, naming the key",
    async (action) => {
      await expectConfigError(load(withGroup({ action, retryLane: true })), {
        key: "groups[0].retryLane",
        value: true,
        expected: `false with action ${action} (a retry lane is for action requeue)`,
      });
    },
  );

  it("refuses retryLane on a discover pattern whose action is not requeue", async () => {
    await expectConfigError(
      load({ discover: [{ match: "t:*", action: "reassign", retryLane: true }] }),
      {
        key: "discover[0].retryLane",
        value: true,
        expected: "false with action reassign (a retry lane is for action requeue)",
      },
    );
  });

  it("refuses a retryLane that is not a boolean", async () => {
    await expectConfigError(load(withGroup({ retryLane: "yes" })), {
      key: "groups[0].retryLane",
      value: "yes",
      expected: "true or false",
    });
  });

  it("names the lane like the default dead-letter stream, in the source's slot", () => {
    expect(defaultRetryLaneStream("orders", "billing")).toBe("{orders}:billing:retry");
    expect(defaultRetryLaneStream("{tenant}.orders", "billing")).toBe(
      "{tenant}.orders:billing:retry",
    );
    for (const stream of ["orders", "{tenant}.orders", "a:b:c"]) {
      expect(keySlot(defaultRetryLaneStream(stream, "g"))).toBe(keySlot(stream));
    }
  });

  it("resolves the lane as the group's requeue target; requeueStream overrides it", () => {
    const lane = resolveGroup({ ...GROUP, retryLane: true });
    expect(lane.retryLaneStream).toBe("{orders}:billing:retry");
    expect(lane.requeueStream).toBe("{orders}:billing:retry");
    const named = resolveGroup({ ...GROUP, retryLane: true, requeueStream: "{orders}:mine" });
    expect(named.retryLaneStream).toBe("{orders}:mine");
    expect(named.requeueStream).toBe("{orders}:mine");
    const plain = resolveGroup(GROUP);
    expect(plain.retryLaneStream).toBeUndefined();
    expect(plain.requeueStream).toBe("orders");
  });
});
