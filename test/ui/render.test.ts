import { describe, expect, it } from "vitest";
import { escapeHtml, html } from "../../src/ui/html.js";
import { parseOverviewQuery } from "../../src/ui/overviewQuery.js";
import { overviewPage } from "../../src/ui/overviewRows.js";
import { renderOverview } from "../../src/ui/renderOverview.js";
import { renderSweeperPage } from "../../src/ui/renderSweeperPage.js";
import { showBytes } from "../../src/ui/showBytes.js";
import { cliLines, shellQuote } from "../../src/ui/cliLines.js";
import { lagAgeMs } from "../../src/ui/format.js";
import { SweepLog } from "../../src/ui/SweepLog.js";
import { emptyResult } from "../../src/sweep/GroupSweepResult.js";
import { resolveGroup } from "../../src/core/resolveGroup.js";
import { defaultGroupConfig } from "../../src/config/defaultConfig.js";
import { groupHref } from "../../src/ui/urls.js";
import { fabricatedGroup, fabricatedReport, NASTY_NAMES } from "./fabricatedReport.js";

const query = (text = ""): ReturnType<typeof parseOverviewQuery> =>
  parseOverviewQuery(new URLSearchParams(text));

describe("escaping", () => {
  it("escapes every interpolation unless it is html itself", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;",
    );
    const inner = html`<b>${"<i>"}</b>`;
    expect(html`<p title="${`"><script>`}">${inner}${["<", html`<br />`]}</p>`.text).toBe(
      `<p title="&quot;&gt;&lt;script&gt;"><b>&lt;i&gt;</b>&lt;<br /></p>`,
    );
  });

  it("no name reaches the overview unescaped, in text, attributes or links", () => {
    const groups = NASTY_NAMES.map((name, i) =>
      fabricatedGroup(name, NASTY_NAMES[(i + 1) % NASTY_NAMES.length] ?? "", "STUCK"),
    );
    const page = renderOverview({
      report: fabricatedReport(groups),
      sweeps: new SweepLog(),
      query: query(`q=${encodeURIComponent("<")}`),
      refreshSeconds: 10,
    });
    expect(page).not.toContain("<script");
    expect(page).not.toContain(`a"b'c&d<e>`);
    expect(page).toContain("a&quot;b&#39;c&amp;d&lt;e&gt;");
    expect(page).toContain("&lt;script&gt;window.__pwned=1&lt;/script&gt;");
    // Links carry the names URL-encoded (a lone surrogate becomes U+FFFD instead of throwing).
    expect(page).toContain(
      `href="/ui/group?stream=${encodeURIComponent("<script>window.__pwned=1</script>")}&amp;group=`,
    );
    expect(groupHref("lone\uD800surrogate", "g")).toBe(
      "/ui/group?stream=lone%EF%BF%BDsurrogate&group=g",
    );
  });

  it("shell-quotes names in the command lines an operator copies", () => {
    expect(shellQuote("orders")).toBe("orders");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote("$(rm -rf /)")).toBe(`'$(rm -rf /)'`);
    const group = resolveGroup(defaultGroupConfig("it's a $(x)", "g 1"));
    expect(cliLines(group)[1]).toBe(
      `stream-janitor dlq redrive --stream 'it'\\''s a $(x)' --group 'g 1' --dry-run`,
    );
  });
});

describe("the overview", () => {
  const groups = [
    fabricatedGroup("orders", "billing", "OK", { lag: 5, pending: 1 }),
    fabricatedGroup("orders", "audit", "STUCK", { pending: 30, oldestPendingIdleMs: 600_000 }),
    fabricatedGroup("payments", "ledger", "STOP", { lag: 900, pending: 2 }),
    fabricatedGroup("tenant:1:events", "workers", "UNKNOWN", { lag: null, pending: null }),
  ];
  const report = fabricatedReport(groups);

  it("sorts by status severity by default, then by name; by any column on request", () => {
    const names = (text: string): string[] =>
      overviewPage(report, new SweepLog(), query(text)).rows.map(
        (row) => `${row.report.stream}/${row.report.group}`,
      );
    expect(names("")).toEqual([
      "payments/ledger",
      "orders/audit",
      "tenant:1:events/workers",
      "orders/billing",
    ]);
    expect(names("sort=lag&dir=desc")).toEqual([
      "payments/ledger",
      "orders/billing",
      "orders/audit",
      // Unknown sorts last whatever the direction.
      "tenant:1:events/workers",
    ]);
    expect(names("sort=pending")).toEqual([
      "orders/billing",
      "payments/ledger",
      "orders/audit",
      "tenant:1:events/workers",
    ]);
  });

  it("filters by substring of stream or group and by status, and pages", () => {
    const page = (text: string) => overviewPage(report, new SweepLog(), query(text));
    expect(page("q=ORD").matching).toBe(2);
    expect(page("q=ledger").rows.map((r) => r.report.group)).toEqual(["ledger"]);
    expect(page("status=STUCK").rows.map((r) => r.report.group)).toEqual(["audit"]);
    const second = page("per=1&page=2");
    expect(second.rows.map((r) => r.report.group)).toEqual(["audit"]);
    expect(second.pages).toBe(4);
    // Out of range falls back to something sensible, never an error.
    expect(page("per=0&page=99").page).toBe(4);
    expect(page("per=5000").rows).toHaveLength(4);
    expect(query("per=5000").per).toBe(1000);
  });

  it("shows status in colour and words, lag age, a refresh that can be paused", () => {
    const page = renderOverview({
      report,
      sweeps: new SweepLog(),
      query: query(),
      refreshSeconds: 10,
    });
    expect(page).toContain(`<span class="status s-STOP">STOP</span>`);
    expect(page).toContain(`<meta http-equiv="refresh" content="10" />`);
    expect(page).toContain(`<meta name="viewport"`);
    expect(page).toContain(`href="/ui?pause=1"`);
    const paused = renderOverview({
      report,
      sweeps: new SweepLog(),
      query: query("pause=1"),
      refreshSeconds: 10,
    });
    expect(paused).not.toContain("http-equiv");
    expect(paused).toContain("resume refresh");
    // 60 s between the last delivered id and the sample, while lag > 0.
    expect(lagAgeMs(5, "1700000000000-0", 1_700_000_060_000)).toBe(60_000);
    expect(lagAgeMs(0, "1700000000000-0", 1_700_000_060_000)).toBeNull();
    expect(lagAgeMs(5, "0-0", 1_700_000_060_000)).toBeNull();
    expect(page).toMatch(/>\s*1m 00s\s*</u);
  });

  it("says so while Redis is unreachable (the verdicts are the last ones)", () => {
    const page = (redis?: "unreachable"): string =>
      renderOverview({
        report: { ...report, ...(redis === undefined ? {} : { redis }) },
        sweeps: new SweepLog(),
        query: query(),
        refreshSeconds: 10,
      });
    expect(page("unreachable")).toContain("Redis is unreachable");
    expect(page()).not.toContain("Redis is unreachable");
  });

  it("shows the leader's last sweep per group, and '-' on a standby", () => {
    const sweeps = new SweepLog();
    sweeps.add(
      { ...emptyResult("orders", "billing"), claimed: 3, durationMs: 4 },
      Date.now() - 5000,
    );
    const leader = renderOverview({
      report,
      sweeps,
      query: query("q=billing"),
      refreshSeconds: 10,
    });
    expect(leader).toMatch(/title="[^"]*: 3 claimed">\s*5s ago\s*</u);
    const standby = renderOverview({
      report: fabricatedReport(groups, { isLeader: false, fencingToken: null }),
      sweeps: new SweepLog(),
      query: query("q=billing"),
      refreshSeconds: 10,
    });
    expect(standby).toContain("this replica is standby");
  });

  it("renders 10,000 groups a page at a time", () => {
    const many = Array.from({ length: 10_000 }, (_, i) =>
      fabricatedGroup(`tenant:${i}:events`, "workers", i % 7 === 0 ? "STUCK" : "OK", { lag: i }),
    );
    const page = renderOverview({
      report: fabricatedReport(many),
      sweeps: new SweepLog(),
      query: query(),
      refreshSeconds: 10,
    });
    expect(page.match(/<tr>/gu)).toHaveLength(101);
    expect(page).toContain("page 1 of 100");
  });
});

describe("the sweep log and the sweeper page", () => {
  it("keeps the last sweeps in a bounded ring, newest first", () => {
    const log = new SweepLog(3);
    for (let i = 0; i < 5; i += 1) log.add(emptyResult("s", `g${i}`), i);
    expect(log.recent().map((r) => r.group)).toEqual(["g4", "g3", "g2"]);
    expect(log.lastOf("s", "g0")?.atMs).toBe(0);
  });

  it("says who holds the lease, the role, the sweeps and the server", () => {
    const log = new SweepLog();
    log.add({ ...emptyResult("<s>", "g"), claimed: 2, durationMs: 12 }, 1_700_000_000_000);
    const page = renderSweeperPage({
      report: fabricatedReport([]),
      lease: { status: "held", host: "host-1", pid: 42, fencingToken: 7, acquiredAtMs: 1 },
      leaseKey: "stream-janitor:lease",
      recent: log.recent(),
      paused: false,
      refreshSeconds: 10,
    });
    expect(page).toContain("host-1 pid 42");
    expect(page).toContain("leader (fencing token 7)");
    expect(page).toContain("&lt;s&gt; › g");
    expect(page).toContain("redis 7.2.4 (standalone)");
    expect(page).toContain("consumerInactive: yes");
  });
});

describe("bodies (http.ui.showBodies)", () => {
  it("shows UTF-8 as text and anything else as hex, truncated to 200 bytes", () => {
    expect(showBytes(Buffer.from("héllo"))).toEqual({ text: "héllo", hex: false, omitted: 0 });
    expect(showBytes(Buffer.from([0xff, 0x00, 0x41]))).toEqual({
      text: "ff0041",
      hex: true,
      omitted: 0,
    });
    const long = showBytes(Buffer.from("é".repeat(150)));
    // 200 bytes is 100 two-byte characters: the cut never splits one.
    expect(long).toEqual({ text: "é".repeat(100), hex: false, omitted: 100 });
    const odd = showBytes(Buffer.from(`a${"é".repeat(150)}`));
    expect(odd.text).toBe(`a${"é".repeat(99)}`);
    expect(odd.omitted).toBe(301 - 199);
    expect(showBytes(Buffer.alloc(300, 0xfe)).omitted).toBe(100);
  });
});
