// The Grafana dashboard against the real daemon: every metric it queries must be one the daemon
// exports (read from a live /metrics, where prom-client lists every registered metric with its
// HELP line even before it has a sample), and every expression must parse (`promtool check
// rules` on a throwaway rule file). A panel for a metric that is not exported yet fails here.
import { execFile, type ExecFileException } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { metricNames } from "../support/promqlMetricNames.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import {
  allPanels,
  dashboardExpressions,
  readDashboard,
  variableMetrics,
  withVariablesReplaced,
  type Dashboard,
} from "./grafanaDashboard.js";

const PROMTOOL = process.env.PROMTOOL ?? "promtool";
/** Series Prometheus makes itself: scrape health and the alerts of the loaded rules. */
const PROMETHEUS_SERIES: ReadonlySet<string> = new Set(["up", "ALERTS"]);
/** What the issue asks the dashboard to show, by the metric that shows it. */
const REQUIRED_METRICS = [
  "stream_janitor_pending_entries",
  "stream_janitor_pending_max_idle_seconds",
  "stream_janitor_lag_entries",
  "stream_janitor_lag_seconds",
  "stream_janitor_dead_lettered_entries_total",
  "stream_janitor_dead_letter_length_entries",
  "stream_janitor_ghost_entries_total",
  "stream_janitor_sweeps_total",
  "stream_janitor_sweep_failures_total",
  "stream_janitor_leader",
  "stream_janitor_redis_up",
  "stream_janitor_group_readable",
  "stream_janitor_retention_blocked",
  "stream_janitor_trimmed_entries_total",
  "stream_janitor_consumers_reaped_total",
  "stream_janitor_config_last_reload_successful",
  "stream_janitor_discovered_groups",
  "stream_janitor_discovery_groups_over_cap_total",
  "stream_janitor_discovery_scan_failures_total",
  "ALERTS",
];

const fixture = useRedisServer();
let daemon: DaemonProcess | undefined;
let removeConfig: (() => Promise<void>) | undefined;
let dashboard: Dashboard;
let exported: Set<string>;

/** Sample names the exposition can carry: HELP/TYPE names, plus a histogram's series. */
function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name = "", type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gmu)) {
    names.add(name);
    if (type === "histogram" || type === "summary") {
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(`${name}${suffix}`);
    }
  }
  return names;
}

beforeAll(async () => {
  dashboard = await readDashboard();
  const prefix = uniquePrefix("dashboard");
  await fixture.redis.xgroup("CREATE", `${prefix}:stream`, "workers", "$", "MKSTREAM");
  const config = await writeConfigFile(testConfig(fixture.server.url, prefix, [{}]));
  removeConfig = config.remove;
  daemon = await DaemonProcess.start(config.path);
  const response = await fetch(`${daemon.httpUrl}/metrics`);
  exported = exportedNames(await response.text());
});

afterAll(async () => {
  await daemon?.kill();
  await removeConfig?.();
});

describe("Grafana dashboard", () => {
  it("queries only metrics the daemon exports", () => {
    expect(exported.size).toBeGreaterThan(10);
    const used = [
      ...dashboardExpressions(dashboard).flatMap(({ where, expr }) =>
        metricNames(expr).map((metric) => ({ where, metric })),
      ),
      ...variableMetrics(dashboard),
    ];
    const unknown = used.filter(
      ({ metric }) => !exported.has(metric) && !PROMETHEUS_SERIES.has(metric),
    );
    expect(unknown, `not exported by the daemon: ${JSON.stringify(unknown)}`).toEqual([]);
  });

  it("shows what an operator needs: PEL, lag, dead letters, ghosts, sweeps, leader, Redis, trimming, alerts", () => {
    const used = new Set(dashboardExpressions(dashboard).flatMap(({ expr }) => metricNames(expr)));
    expect(REQUIRED_METRICS.filter((metric) => !used.has(metric))).toEqual([]);
  });

  it("has PromQL that promtool parses", async () => {
    const expressions = dashboardExpressions(dashboard);
    expect(expressions.length).toBeGreaterThan(0);
    const rules = {
      groups: [
        {
          name: "dashboard",
          rules: expressions.map(({ expr }, index) => ({
            record: `dashboard:expression_${index}`,
            expr: withVariablesReplaced(expr),
          })),
        },
      ],
    };
    const dir = await mkdtemp(join(tmpdir(), "sj-dashboard-"));
    try {
      const file = join(dir, "dashboard.rules.yml");
      await writeFile(file, stringify(rules));
      try {
        await promisify(execFile)(PROMTOOL, ["check", "rules", file]);
      } catch (error) {
        const failure = error as ExecFileException;
        const where = expressions.map(({ where: w }, i) => `${i}: ${w}`).join("\n");
        expect.fail(
          `promtool check rules: ${failure.stdout ?? ""}${failure.stderr ?? failure.message}\n${where}`,
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("picks its data source, job, stream and group from variables", () => {
    const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect(variables.get("datasource")?.type).toBe("datasource");
    expect(variables.get("datasource")?.query).toBe("prometheus");
    for (const name of ["job", "stream", "group"]) expect(variables.get(name)?.type).toBe("query");
    const panels = allPanels(dashboard).filter((panel) => panel.type !== "row");
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe("${datasource}");
      for (const target of panel.targets ?? []) {
        expect(target.datasource?.uid ?? "${datasource}", panel.title).toBe("${datasource}");
      }
    }
    // Every per-group panel follows the stream and group selection (the replica-wide and
    // discovery panels have no stream label to select on).
    for (const { where, expr } of dashboardExpressions(dashboard)) {
      if (
        !/stream_janitor_(?!leader|redis_up|build_info|config_last_reload_successful|discover)/u.test(
          expr,
        )
      )
        continue;
      expect(expr, where).toContain('stream=~"$stream"');
    }
    const ids = allPanels(dashboard).map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard.uid).toBe("stream-janitor");
  });
});

describe("withVariablesReplaced", () => {
  it("turns Grafana variables into values promtool accepts", () => {
    expect(
      withVariablesReplaced('rate(a{stream=~"$stream", job=~"${job}"}[$__rate_interval])'),
    ).toBe('rate(a{stream=~".*", job=~".*"}[5m])');
  });
});
