import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "./kustomize.js";

const DASHBOARD_FILE = "deploy/grafana/stream-janitor.json";

interface DashboardTarget {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  targets?: DashboardTarget[];
  panels?: DashboardPanel[];
}

interface DashboardVariable {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { uid?: string };
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: DashboardPanel[];
  templating: { list: DashboardVariable[] };
}

export async function readDashboard(): Promise<Dashboard> {
  return JSON.parse(await readFile(join(repoRoot, DASHBOARD_FILE), "utf8")) as Dashboard;
}

/** Every panel, those inside collapsed rows included. */
export function allPanels(dashboard: Dashboard): DashboardPanel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** Each PromQL expression of the dashboard, named by where it is. */
export function dashboardExpressions(dashboard: Dashboard): { where: string; expr: string }[] {
  return allPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `panel "${panel.title}" (${panel.id}) target ${target.refId}`,
      expr: target.expr,
    })),
  );
}

/** The metric each query variable reads its values from (`label_values(metric{...}, label)`). */
export function variableMetrics(dashboard: Dashboard): { where: string; metric: string }[] {
  return dashboard.templating.list
    .filter((variable) => variable.type === "query")
    .map((variable) => {
      const query = typeof variable.query === "string" ? variable.query : variable.query.query;
      const metric = /^label_values\(\s*([A-Za-z_:][\w:]*)/u.exec(query)?.[1];
      if (metric === undefined) throw new Error(`variable ${variable.name}: unexpected ${query}`);
      return { where: `variable ${variable.name}`, metric };
    });
}

/**
 * The expression as Prometheus would receive it from Grafana: the dashboard variables replaced
 * by values of the right shape, so `promtool` can parse it.
 */
export function withVariablesReplaced(expr: string): string {
  return expr
    .replace(/\$__rate_interval|\$__interval|\$__range/gu, "5m")
    .replace(/\$\{?(job|stream|group)\}?/gu, ".*");
}
