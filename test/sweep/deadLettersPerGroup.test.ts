import { describe, expect, it } from "vitest";
import { formatInspectReport } from "../../src/operations/formatInspectReport.js";
import { readInspectReport } from "../../src/operations/inspectReport.js";
import { readGroupDetail } from "../../src/ui/readGroupDetail.js";
import { renderGroupPage } from "../../src/ui/renderGroupPage.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { createTestRefresher } from "../metrics/refresherHarness.js";
import { createTestSampler } from "../status/statusHarness.js";
import { commandCalls } from "../support/commandStats.js";

const fixture = useRedisServer();

/**
 * The repro: billing (reassign) and audit (dead-letter) read one stream and share its
 * default dead-letter stream; audit has 3 dead letters, billing none.
 */
async function sharedDeadLetterStream(name: string) {
  const stream = uniquePrefix(name);
  await addStuckEntries(fixture.redis, stream, "billing", []);
  await addStuckEntries(fixture.redis, stream, "audit", numberedBodies(3));
  const billing = groupConfig(stream, { group: "billing", action: "reassign" });
  const audit = groupConfig(stream, { group: "audit", action: "dead-letter" });
  for (const group of [billing, audit]) {
    await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
  }
  expect(await fixture.redis.xlen(audit.deadLetterStream)).toBe(3);
  return { stream, billing, audit, deadLetterStream: audit.deadLetterStream };
}

const lease = { key: "unused:lease", ttlMs: 15000, renewDeadlineMs: 10000, retryPeriodMs: 2000 };

async function scrapeText(groups: ResolvedGroup[]): Promise<string> {
  const { refresher, registry } = createTestRefresher(fixture.redis, groups);
  await refresher.refresh();
  return registry.metrics();
}

describe("dead letters counted per group on a shared dead-letter stream", () => {
  it("exports each group's own dead letters, and the shared stream's length once", async () => {
    const { stream, deadLetterStream, billing, audit } = await sharedDeadLetterStream("dl-metric");
    const text = await scrapeText([billing, audit]);
    expect(text).toContain(
      `stream_janitor_dead_letters_entries{stream="${stream}",group="billing"} 0`,
    );
    expect(text).toContain(
      `stream_janitor_dead_letters_entries{stream="${stream}",group="audit"} 3`,
    );
    const lengths = text
      .split("\n")
      .filter((line) => line.startsWith("stream_janitor_dead_letter_stream_length_entries{"));
    expect(lengths).toEqual([
      `stream_janitor_dead_letter_stream_length_entries{stream="${deadLetterStream}"} 3`,
    ]);
  });

  it("inspect counts each group's own dead letters (text and JSON)", async () => {
    const { billing, audit } = await sharedDeadLetterStream("dl-inspect");
    const report = await readInspectReport(fixture.redis, [billing, audit], {
      lease,
      retention: [],
    });
    expect(report.groups.map((g) => [g.group, g.deadLetters])).toEqual([
      ["billing", 0],
      ["audit", 3],
    ]);
    const lines = formatInspectReport(report).split("\n");
    const header = lines[0] ?? "";
    const column = header.indexOf("DEAD LETTERS") + "DEAD LETTERS".length;
    const cell = (line: string) => line.slice(0, column).trim().split(/\s+/u).at(-1);
    expect(cell(lines.find((l) => / billing /u.test(l)) ?? "")).toBe("0");
    expect(cell(lines.find((l) => / audit /u.test(l)) ?? "")).toBe("3");
  });

  it("the status sample and the /ui group page count only the group's dead letters", async () => {
    const { billing, audit, deadLetterStream } = await sharedDeadLetterStream("dl-status");
    const { sampler } = createTestSampler(fixture.redis, [billing, audit]);
    await sampler.sampleOnce();
    expect(sampler.statusOf(billing.id)?.sample.deadLetters).toBe(0);
    expect(sampler.statusOf(audit.id)?.sample.deadLetters).toBe(3);

    const page = renderGroupPage({
      group: billing,
      status: sampler.statusOf(billing.id),
      nowMs: Date.now(),
      detail: await readGroupDetail(fixture.redis, billing, "unused:events"),
      lastSweep: undefined,
      showBodies: false,
      paused: false,
      refreshSeconds: 10,
    });
    expect(page).toContain("No dead letters of this");
    expect(page).not.toContain(`3 in ${deadLetterStream}`);
    expect(page).toMatch(/<dd>0 of this group in \{[^}]+\}:dead/u);
  });

  it("costs a scrape the same whatever the dead-letter stream holds: no entry is read", async () => {
    const { billing, audit } = await sharedDeadLetterStream("dl-cost");
    const counted = ["xrange", "xrevrange", "xlen", "hget", "xinfo|stream"] as const;
    const scrapeCalls = async () => {
      const before = await commandCalls(fixture.redis, counted);
      await scrapeText([billing, audit]);
      const after = await commandCalls(fixture.redis, counted);
      return counted.map((name) => (after[name] ?? 0) - (before[name] ?? 0));
    };
    const few = await scrapeCalls();
    await addStuckEntries(fixture.redis, audit.stream, "audit", numberedBodies(500));
    await sweepOnce(audit, sweepContext(fixture.redis), neverAborted);
    expect(await fixture.redis.xlen(audit.deadLetterStream)).toBe(503);
    const many = await scrapeCalls();
    expect(many).toEqual(few);
    // Not one entry read: counts are lengths (XLEN), the index state one HGET per group.
    expect(many.slice(0, 2)).toEqual([0, 0]);
    expect(await scrapeText([billing, audit])).toContain(
      `stream_janitor_dead_letters_entries{stream="${audit.stream}",group="audit"} 503`,
    );
  });
});
