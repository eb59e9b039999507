import { execFile } from "node:child_process";
import type { Redis } from "ioredis";
import type { Violation } from "./checker.js";
import { CHAOS_GROUPS, type ChaosGroup } from "./groups.js";
import { pollUntil } from "./quiescence.js";
import { metricValue, type JanitorReplica } from "./servers.js";

/** Each group's own dead letters in Redis (x-original-group), read once at quiescence. */
async function deadLettersByGroup(redis: Redis): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const stream of new Set(CHAOS_GROUPS.map((g) => g.deadLetters))) {
    let from = "-";
    for (;;) {
      const page = (await redis.xrange(stream, from, "+", "COUNT", 100)) as [string, string[]][];
      for (const [, fields] of page) {
        const group = fields[fields.indexOf("x-original-group") + 1] ?? "";
        counts.set(group, (counts.get(group) ?? 0) + 1);
      }
      const last = page[page.length - 1];
      if (page.length < 100 || last === undefined) break;
      from = `(${last[0]}`;
    }
  }
  return counts;
}

interface Verdict {
  stream: string;
  group: string;
  status?: string | null;
  reason?: string | null;
  statusReason?: string | null;
}

/**
 * OK, or after a Redis restart from its AOF (7.0-7.2) the documented UNKNOWN of a lag no entry
 * backs: Redis replays XREADGROUP as XCLAIM ... LASTID and keeps a stale lag (README, Group status).
 */
function statusProblem(verdict: Verdict, redisRestarted: boolean): string | undefined {
  const reason = verdict.reason ?? verdict.statusReason ?? "";
  if (verdict.status === "OK") return undefined;
  if (redisRestarted && verdict.status === "UNKNOWN" && reason.includes("no entry follows")) {
    return undefined;
  }
  return `status ${verdict.status ?? "none"} (${reason})`;
}

type Check = (group: ChaosGroup, deadLetters: number) => string[];

function metricsCheck(text: string): Check {
  return (group, deadLetters) => {
    const labels = [`stream="${group.stream}"`, `group="${group.group}"`];
    const value = (name: string) => metricValue(text, `stream_janitor_${name}`, labels);
    const want: [string, number][] = [
      ["pending_entries", 0],
      ["dead_letters_entries", deadLetters],
    ];
    if (group.lane !== undefined) {
      want.push(["retry_lane_length_entries", 0], ["retry_lane_pending_entries", 0]);
    }
    return want
      .filter(([name, expected]) => value(name) !== expected)
      .map(([name, expected]) => `${name} ${value(name)}, Redis ${expected}`);
  };
}

function statusCheck(json: string, redisRestarted: boolean): Check {
  const groups = (JSON.parse(json) as { groups: (Verdict & { sample?: Sample })[] }).groups;
  return (group, deadLetters) => {
    const verdict = groups.find((g) => g.stream === group.stream && g.group === group.group);
    if (verdict === undefined) return ["no verdict"];
    const problems = [statusProblem(verdict, redisRestarted)];
    if (verdict.sample?.pending !== 0) problems.push(`pending ${verdict.sample?.pending}`);
    if (verdict.sample?.deadLetters !== deadLetters) {
      problems.push(`deadLetters ${verdict.sample?.deadLetters}, Redis ${deadLetters}`);
    }
    return problems.filter((p): p is string => p !== undefined);
  };
}

interface Sample {
  pending?: number;
  deadLetters?: number | null;
}

interface Inspected extends Verdict {
  pending?: number;
  deadLetters?: number;
  retryLane?: { length: number; pending: number | null };
}

function inspectCheck(json: string, redisRestarted: boolean): Check {
  const groups = (JSON.parse(json) as { groups: Inspected[] }).groups;
  return (group, deadLetters) => {
    const found = groups.find((g) => g.stream === group.stream && g.group === group.group);
    if (found === undefined) return ["not in the report"];
    const problems = [statusProblem(found, redisRestarted)];
    if (found.pending !== 0) problems.push(`pending ${found.pending}`);
    if (found.deadLetters !== deadLetters)
      problems.push(`deadLetters ${found.deadLetters}, Redis ${deadLetters}`);
    const lane = found.retryLane;
    if (lane !== undefined && (lane.length !== 0 || lane.pending !== 0)) {
      problems.push(`retry lane length ${lane.length}, pending ${lane.pending}`);
    }
    return problems.filter((p): p is string => p !== undefined);
  };
}

function inspect(cli: string, config: string, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const args = [cli, "inspect", "--json", "--config", config, "--url", url];
    execFile(process.execPath, args, { timeout: 20_000 }, (error, stdout) => {
      if (error === null) resolve(stdout);
      else reject(new Error(`inspect --json failed: ${error.message}`));
    });
  });
}

export interface AgreementTargets {
  redis: Redis;
  janitors: readonly JanitorReplica[];
  cli: string;
  operatorConfig: string;
  redisRestarted: boolean;
}

/**
 * At quiescence every view agrees with Redis, within `timeoutMs`: each janitor's /metrics and
 * /status.json, and `inspect --json` (asking the first janitor for the statuses): nothing
 * pending, lanes empty, the group's dead letters as Redis holds them, every status OK.
 */
export async function viewsAgree(on: AgreementTargets, timeoutMs: number): Promise<Violation[]> {
  const deadLetters = await deadLettersByGroup(on.redis);
  let problems: Violation[] = [];
  const collect = (invariant: string, where: string, check: Check) => {
    for (const group of CHAOS_GROUPS) {
      for (const problem of check(group, deadLetters.get(group.group) ?? 0)) {
        problems.push({ invariant, detail: `${where} ${group.stream}/${group.group}: ${problem}` });
      }
    }
  };
  const agree = async (): Promise<boolean> => {
    problems = [];
    for (const janitor of on.janitors) {
      const where = `janitor-${janitor.index}`;
      const [metrics, status] = [await janitor.get("/metrics"), await janitor.get("/status.json")];
      if (metrics === undefined || status === undefined) {
        problems.push({ invariant: "metrics-disagree", detail: `${where}: no answer` });
        continue;
      }
      collect("metrics-disagree", where, metricsCheck(metrics));
      collect("status-disagree", where, statusCheck(status, on.redisRestarted));
    }
    const first = on.janitors[0];
    const url = `http://127.0.0.1:${first?.httpPort ?? 0}`;
    try {
      const report = await inspect(on.cli, on.operatorConfig, url);
      collect("inspect-disagree", "inspect --json", inspectCheck(report, on.redisRestarted));
    } catch (error) {
      problems.push({ invariant: "inspect-disagree", detail: `inspect --json: ${String(error)}` });
    }
    return problems.length === 0;
  };
  if (await pollUntil(agree, timeoutMs)) return [];
  return problems;
}
