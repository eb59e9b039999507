import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/ConfigError.js";
import { runCli } from "../support/daemonProcess.js";
import { useConfigFiles } from "../support/useConfigFiles.js";
import { validated } from "./configFiles.js";

const configPath = useConfigFiles();

const billing = { stream: "orders", group: "billing", action: "requeue", retryLane: true };

/** The problems validateConfig reports, one message each; [] when the configuration is valid. */
async function problemsOf(content: object): Promise<string[]> {
  try {
    await validated(content);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.map((problem) => problem.message);
  }
}

describe("key roles never collide", () => {
  it.each<[string, object, string, string]>([
    [
      "a dead-letter stream that is the group's own retry lane",
      { groups: [{ ...billing, deadLetterStream: "{orders}:billing:retry" }] },
      "groups[0].deadLetterStream",
      "groups[0]'s retry lane (groups[0].retryLane)",
    ],
    [
      "a lease key that is a source stream",
      { lease: { key: "orders" }, groups: [{ stream: "orders", group: "billing" }] },
      "lease.key",
      "groups[0]'s source stream (groups[0].stream)",
    ],
    [
      "group A's lane that is group B's source",
      {
        groups: [
          { ...billing, requeueStream: "billing-retry" },
          { stream: "billing-retry", group: "shipping" },
        ],
      },
      "groups[0].requeueStream",
      "groups[1]'s source stream (groups[1].stream)",
    ],
    [
      "a dead-letter stream that is another group's source",
      {
        groups: [
          { stream: "orders", group: "billing", deadLetterStream: "payments" },
          { stream: "payments", group: "ledger" },
        ],
      },
      "groups[0].deadLetterStream",
      "groups[1]'s source stream (groups[1].stream)",
    ],
    [
      "an events stream that is a dead-letter stream",
      {
        events: { stream: "{orders}:dead" },
        groups: [{ stream: "orders", group: "billing" }],
      },
      "events.stream",
      "groups[0]'s dead-letter stream (groups[0].deadLetterStream)",
    ],
    [
      "an events stream that is a retry lane",
      { events: { stream: "{orders}:billing:retry" }, groups: [billing] },
      "events.stream",
      "groups[0]'s retry lane (groups[0].retryLane)",
    ],
    [
      "a lease key that is a retry lane",
      { lease: { key: "{orders}:billing:retry" }, groups: [billing] },
      "lease.key",
      "groups[0]'s retry lane (groups[0].retryLane)",
    ],
    [
      "a lease key that is the events stream",
      { lease: { key: "jobs:events" }, events: { stream: "jobs:events" }, groups: [billing] },
      "lease.key",
      "the events stream (events.stream)",
    ],
    [
      "a requeue target that is another group's dead-letter stream",
      {
        groups: [
          { stream: "orders", group: "billing", requeueStream: "payments:dead" },
          { stream: "payments", group: "ledger", deadLetterStream: "payments:dead" },
        ],
      },
      "groups[1].deadLetterStream",
      "groups[0]'s requeue target (groups[0].requeueStream)",
    ],
    [
      "a discover pattern's dead-letter stream that is a listed source",
      {
        groups: [{ stream: "orders", group: "billing" }],
        discover: [{ match: "tenant:*", deadLetterStream: "orders" }],
      },
      "discover[0].deadLetterStream",
      "groups[0]'s source stream (groups[0].stream)",
    ],
  ])("refuses %s, naming both keys", async (_, content, key, other) => {
    const problems = await problemsOf(content);
    const problem = problems.find((message) => message.includes(`configuration: ${key} `));
    expect(problem, problems.join("\n")).toBeDefined();
    expect(problem).toContain(other);
  });

  it.each<[string, object]>([
    [
      "several groups of one stream sharing its dead-letter stream",
      {
        groups: [
          { stream: "orders", group: "billing" },
          { stream: "orders", group: "shipping" },
        ],
      },
    ],
    [
      "a requeue target equal to the source (requeue in place)",
      { groups: [{ stream: "orders", group: "billing", requeueStream: "orders" }] },
    ],
    [
      "one dead-letter stream for groups of two streams",
      {
        groups: [
          { stream: "orders", group: "billing", deadLetterStream: "all:dead" },
          { stream: "payments", group: "ledger", deadLetterStream: "all:dead" },
        ],
      },
    ],
    [
      "a retry stream read by the group of the same name, swept as a group of its own",
      {
        groups: [
          { stream: "orders", group: "billing", requeueStream: "orders:retry" },
          { stream: "orders:retry", group: "billing" },
        ],
      },
    ],
    [
      "two groups with retry lanes on one stream",
      { groups: [billing, { ...billing, group: "shipping" }] },
    ],
  ])("accepts %s", async (_, content) => {
    expect(await problemsOf(content)).toEqual([]);
  });

  it("check-config exits 78 naming both roles", async () => {
    const path = await configPath({
      groups: [{ ...billing, maxDeliveries: 3, deadLetterStream: "{orders}:billing:retry" }],
    });
    const result = await runCli(["check-config", "--offline", "--config", path]);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("groups[0].deadLetterStream");
    expect(result.stderr).toContain("groups[0]'s retry lane (groups[0].retryLane)");
  });

  it("check-config exits 78 for a lease key equal to a source stream", async () => {
    const path = await configPath({
      lease: { key: "orders" },
      groups: [{ stream: "orders", group: "billing" }],
    });
    const result = await runCli(["check-config", "--offline", "--config", path]);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("lease.key");
    expect(result.stderr).toContain("groups[0]'s source stream (groups[0].stream)");
  });
});
