// Checks the alert rules: promtool's own checks and unit tests, the PrometheusRule copy, the
// annotations every alert must carry, the runbook sections they point at, and the metric names.
// promtool is required (CI installs it; Debian: `apt-get install prometheus`): without it these
// tests fail rather than skip. Set PROMTOOL to use a binary that is not on PATH.
import { execFile, type ExecFileException } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, it, expect } from "vitest";
import { parse } from "yaml";
import { metricNames } from "../support/promqlMetricNames.js";

const execFileAsync = promisify(execFile);

const root = fileURLToPath(new URL("../..", import.meta.url));
const RULES_FILE = "deploy/prometheus/stream-janitor.rules.yml";
const RULES_TEST_FILE = "test/prometheus/stream-janitor.rules.test.yml";
const PROMETHEUS_RULE_FILE = "deploy/kubernetes/components/monitoring/prometheusrule.yaml";
const RUNBOOK_FILE = "deploy/prometheus/runbook.md";
/** Relative to the rule file; deploy/kubernetes/components/runbook-url prefixes a base URL. */
const RUNBOOK_URL = "runbook.md";
const PROMTOOL = process.env.PROMTOOL ?? "promtool";

/** Every metric an expression may use: contract section 5, the extra gauges, and `up`. */
const KNOWN_METRICS: ReadonlySet<string> = new Set([
  "stream_janitor_pending_entries",
  "stream_janitor_pending_max_idle_seconds",
  "stream_janitor_lag_entries",
  "stream_janitor_lag_valid",
  "stream_janitor_stream_length_entries",
  "stream_janitor_dead_letter_length_entries",
  "stream_janitor_dead_letters_entries",
  "stream_janitor_dead_letter_stream_length_entries",
  "stream_janitor_claimed_entries_total",
  "stream_janitor_requeued_entries_total",
  "stream_janitor_reassigned_entries_total",
  "stream_janitor_dead_lettered_entries_total",
  "stream_janitor_ghost_entries_total",
  "stream_janitor_dead_letters_dropped_total",
  "stream_janitor_claimed_from_active_consumer_entries_total",
  "stream_janitor_sweeps_total",
  "stream_janitor_sweep_failures_total",
  "stream_janitor_sweep_duration_seconds_bucket",
  "stream_janitor_sweep_duration_seconds_sum",
  "stream_janitor_sweep_duration_seconds_count",
  "stream_janitor_last_sweep_success_timestamp_seconds",
  "stream_janitor_leader",
  "stream_janitor_redis_up",
  "stream_janitor_build_info",
  "stream_janitor_group_readable",
  "stream_janitor_group_status",
  // Extra gauges (stream, group).
  "stream_janitor_lag_seconds",
  "stream_janitor_pending_oldest_age_seconds",
  "stream_janitor_pending_max_deliveries",
  "stream_janitor_group_max_deliveries",
  // Maintenance (reaping, safe retention).
  "stream_janitor_consumers_reaped_total",
  "stream_janitor_trimmed_entries_total",
  "stream_janitor_retention_blocked",
  // Configuration reloads and discovery.
  "stream_janitor_config_last_reload_successful",
  "stream_janitor_discovery_scan_failures_total",
  "stream_janitor_discovery_groups_over_cap_total",
  // Prometheus' own scrape health.
  "up",
]);

const SEVERITIES: ReadonlySet<string> = new Set(["critical", "warning", "info"]);

interface AlertRule {
  alert: string;
  expr: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

interface PromtoolResult {
  code: number | string | null;
  output: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringRecord(value: unknown, where: string): Record<string, string> {
  if (!isRecord(value)) throw new Error(`${where}: expected a mapping`);
  const result: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== "string") throw new Error(`${where}.${key}: expected a string`);
    result[key] = entry;
  }
  return result;
}

function ruleGroups(value: unknown, where: string): RuleGroup[] {
  if (!Array.isArray(value)) throw new Error(`${where}: expected a list of rule groups`);
  return value.map((group: unknown, g) => {
    if (!isRecord(group) || typeof group.name !== "string" || !Array.isArray(group.rules)) {
      throw new Error(`${where}[${g}]: expected a group with a name and rules`);
    }
    const rules = group.rules.map((rule: unknown, r): AlertRule => {
      const at = `${where}[${g}].rules[${r}]`;
      if (!isRecord(rule) || typeof rule.alert !== "string" || typeof rule.expr !== "string") {
        throw new Error(`${at}: expected an alerting rule (alert, expr)`);
      }
      return {
        alert: rule.alert,
        expr: rule.expr,
        labels: stringRecord(rule.labels, `${at}.labels`),
        annotations: stringRecord(rule.annotations, `${at}.annotations`),
      };
    });
    return { name: group.name, rules };
  });
}

async function readText(path: string): Promise<string> {
  return readFile(new URL(path, new URL("../../", import.meta.url)), "utf8");
}

async function readYaml(path: string): Promise<unknown> {
  const parsed: unknown = parse(await readText(path));
  return parsed;
}

async function loadRuleGroups(): Promise<RuleGroup[]> {
  const file = await readYaml(RULES_FILE);
  if (!isRecord(file)) throw new Error(`${RULES_FILE}: expected a mapping`);
  return ruleGroups(file.groups, `${RULES_FILE}: groups`);
}

async function loadAlerts(): Promise<AlertRule[]> {
  return (await loadRuleGroups()).flatMap((group) => group.rules);
}

async function promtool(args: string[]): Promise<PromtoolResult> {
  try {
    const { stdout, stderr } = await execFileAsync(PROMTOOL, args, { cwd: root });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error: unknown) {
    const failure = error as ExecFileException;
    if (failure.code === "ENOENT") {
      throw new Error(
        `promtool not found (tried "${PROMTOOL}"): install it (Debian/Ubuntu: apt-get install ` +
          "prometheus; or a release from https://prometheus.io/download/) or set PROMTOOL to its path",
        { cause: error },
      );
    }
    const output = `${failure.stdout ?? ""}${failure.stderr ?? ""}`;
    return { code: failure.code ?? null, output: output === "" ? failure.message : output };
  }
}

describe("Prometheus alert rules", () => {
  it("pass promtool check rules", async () => {
    const result = await promtool(["check", "rules", RULES_FILE]);
    expect(result.code, `promtool check rules ${RULES_FILE}:\n${result.output}`).toBe(0);
  });

  it("pass the promtool unit tests", async () => {
    const result = await promtool(["test", "rules", RULES_TEST_FILE]);
    expect(result.code, `promtool test rules ${RULES_TEST_FILE}:\n${result.output}`).toBe(0);
  });

  it("are what `npm run gen:prometheusrule` writes into the PrometheusRule manifest", async () => {
    try {
      await execFileAsync(process.execPath, ["config/generatePrometheusRule.js", "--check"], {
        cwd: root,
      });
    } catch (error: unknown) {
      const failure = error as ExecFileException;
      expect.fail(
        `${PROMETHEUS_RULE_FILE} differs from what ${RULES_FILE} generates ` +
          `(run npm run gen:prometheusrule): ${failure.stderr ?? failure.message}`,
      );
    }
  });

  it("are the same in the PrometheusRule manifest", async () => {
    const manifest = await readYaml(PROMETHEUS_RULE_FILE);
    const rules = await readYaml(RULES_FILE);
    if (!isRecord(manifest) || !isRecord(manifest.spec) || !isRecord(rules)) {
      throw new Error(`${PROMETHEUS_RULE_FILE} or ${RULES_FILE}: unexpected shape`);
    }
    expect(manifest.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(manifest.kind).toBe("PrometheusRule");
    expect(
      manifest.spec.groups,
      `${PROMETHEUS_RULE_FILE} spec.groups must equal the groups of ${RULES_FILE}`,
    ).toEqual(rules.groups);
  });

  it("form one group of uniquely named StreamJanitor* alerts", async () => {
    const groups = await loadRuleGroups();
    expect(groups.map((group) => group.name)).toEqual(["stream-janitor"]);
    const names = groups.flatMap((group) => group.rules.map((rule) => rule.alert));
    expect(new Set(names).size, `duplicate alert names in ${names.join(", ")}`).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^StreamJanitor(?:[A-Z][a-z0-9]*)+$/);
  });

  it("carry severity, summary, description and a runbook_url", async () => {
    for (const rule of await loadAlerts()) {
      const where = `alert ${rule.alert}`;
      expect(SEVERITIES.has(rule.labels.severity ?? ""), `${where}: severity`).toBe(true);
      expect(rule.annotations.summary ?? "", `${where}: summary`).not.toBe("");
      expect(rule.annotations.description ?? "", `${where}: description`).not.toBe("");
      expect(rule.annotations.runbook_url, `${where}: runbook_url`).toBe(
        `${RUNBOOK_URL}#${rule.alert.toLowerCase()}`,
      );
      if (rule.expr.includes("by (stream, group")) {
        expect(
          rule.annotations.description,
          `${where}: description names stream and group`,
        ).toContain("{{ $labels.stream }}");
        expect(rule.annotations.description).toContain("{{ $labels.group }}");
      }
    }
  });

  it("point at runbook sections that exist", async () => {
    const runbook = await readText(RUNBOOK_FILE);
    const anchors = new Set(
      [...runbook.matchAll(/^## (.+)$/gm)].map(([, heading = ""]) =>
        heading
          .trim()
          .toLowerCase()
          .replace(/[^\w\- ]/g, "")
          .replace(/ /g, "-"),
      ),
    );
    for (const rule of await loadAlerts()) {
      expect(runbook, `${RUNBOOK_FILE}: heading for ${rule.alert}`).toMatch(
        new RegExp(`^## ${rule.alert}$`, "m"),
      );
      const anchor = (rule.annotations.runbook_url ?? "").split("#")[1] ?? "";
      expect(anchors.has(anchor), `${rule.alert}: ${RUNBOOK_FILE} has no #${anchor}`).toBe(true);
    }
  });

  it("use known metric names only", async () => {
    for (const rule of await loadAlerts()) {
      const names = metricNames(rule.expr);
      expect(names.length, `${rule.alert}: no metric found in ${rule.expr}`).toBeGreaterThan(0);
      const unknown = names.filter((name) => !KNOWN_METRICS.has(name));
      expect(unknown, `${rule.alert}: unknown metrics in ${rule.expr}`).toEqual([]);
    }
  });

  it("are each unit-tested firing and quiet", async () => {
    const tests = await readYaml(RULES_TEST_FILE);
    if (!isRecord(tests) || !Array.isArray(tests.tests)) {
      throw new Error(`${RULES_TEST_FILE}: expected a mapping with tests`);
    }
    const firing = new Set<string>();
    const quiet = new Set<string>();
    for (const group of tests.tests as unknown[]) {
      if (!isRecord(group) || !Array.isArray(group.alert_rule_test)) continue;
      for (const check of group.alert_rule_test as unknown[]) {
        if (!isRecord(check) || typeof check.alertname !== "string") continue;
        const expected = check.exp_alerts;
        const empty = expected === undefined || (Array.isArray(expected) && expected.length === 0);
        (empty ? quiet : firing).add(check.alertname);
      }
    }
    for (const rule of await loadAlerts()) {
      expect(firing.has(rule.alert), `${rule.alert}: no test case where it fires`).toBe(true);
      expect(quiet.has(rule.alert), `${rule.alert}: no test case where it stays quiet`).toBe(true);
    }
  });
});

describe("metricNames", () => {
  it("finds selectors, not functions, keywords, labels or durations", () => {
    expect(
      metricNames(
        'max by (stream, group) (increase(a_total{job="x", le="+Inf"}[5m] offset 1m)) > 1e3\n' +
          "and on (stream) sum without (instance) (rate(b[5m:1m])) or absent(c) unless time() - d",
      ),
    ).toEqual(["a_total", "b", "c", "d"]);
  });
});
