import { Writable } from "node:stream";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { Counter, Registry } from "prom-client";
import { sha256 } from "../../src/config/httpCredentials.js";
import { GroupSet } from "../../src/core/GroupSet.js";
import type { StatusBoard } from "../../src/core/groupStatus.js";
import { resolveGroup, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import { startHttpServer, type RunningHttpServer } from "../../src/http/createHttpServer.js";
import { HttpAuthGuard } from "../../src/http/HttpAuthGuard.js";
import { createUiActionRunner } from "../../src/operations/uiActionRunner.js";
import { RedriveTaskRunner } from "../../src/maintenance/RedriveTaskRunner.js";
import { createRedriveTaskMetrics } from "../../src/metrics/redriveTaskMetrics.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { ActionRefusals } from "../../src/ui/ActionRefusals.js";
import { createConsoleRoute } from "../../src/ui/createConsole.js";
import { CsrfTokens } from "../../src/ui/CsrfTokens.js";
import { SweepLog } from "../../src/ui/SweepLog.js";
import { fabricatedReport } from "./fabricatedReport.js";
import { testConfig } from "../support/testConfig.js";
import { authRequest, basic, bearer, type AuthAnswer } from "../support/authRequest.js";
import { uniquePrefix } from "../support/redisServer.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";

/** The credentials of the actions tests: two operators (named tokens), a viewer (basic auth). */
export const TOKENS = { alice: "tok-alice", bob: "tok-bob" } as const;
export const VIEWER = "viewer:pw";
export { basic, bearer };

export interface ActionsServer {
  http: RunningHttpServer;
  groups: GroupSet;
  refused: Counter;
  logLines: Record<string, unknown>[];
  clock: { now: number };
  eventsStream: string;
  /** lease.key: the directory of redrive tasks lives beside it. */
  leaseKey: string;
  add(stream: string, group: string): ResolvedGroup;
  close(): Promise<void>;
}

/**
 * A console with actions on, behind roles, on a real Redis: the route and guard the daemon
 * builds, with the runner of the CLI's code, a clock for the refusal log, a log kept in memory.
 */
export async function startActionsServer(
  redis: Redis,
  redisUrl: string,
  prefix: string,
): Promise<ActionsServer> {
  const registry = new Registry();
  const logLines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  const clock = { now: 1_000_000 };
  const refused = new Counter({
    name: "refused_total",
    help: "h",
    labelNames: ["reason"],
    registers: [registry],
  });
  const config = testConfig(redisUrl, prefix, [], {});
  const groups = new GroupSet([]);
  const scripted = registerScripts(redis.duplicate());
  const board: StatusBoard = { report: () => fabricatedReport([]), statusOf: () => undefined };
  const guard = new HttpAuthGuard({
    credentials: [
      {
        role: "viewer",
        credentials: { scheme: "Basic", digests: [sha256(VIEWER)], names: ["viewer"] },
      },
      {
        role: "operator",
        credentials: {
          scheme: "Bearer",
          digests: [sha256(TOKENS.alice), sha256(TOKENS.bob)],
          names: ["alice", "bob"],
        },
      },
    ],
    logger,
    refusals: new Counter({ name: "unauthorized_total", help: "h", registers: [registry] }),
  });
  const route = createConsoleRoute({
    board,
    sweeps: new SweepLog(),
    groups,
    redis: scripted,
    config: { ...config, http: { ...config.http, ui: { ...config.http.ui, actions: true } } },
    actions: {
      runner: createUiActionRunner(scripted, config),
      csrf: new CsrfTokens(),
      refusals: new ActionRefusals(refused, logger, () => clock.now),
      redis: scripted,
      events: config.events,
      logger,
    },
  });
  const http = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    registry,
    logger,
    beforeScrape: () => Promise.resolve(),
    isReady: () => Promise.resolve(true),
    routes: [route],
    auth: guard,
  });
  return {
    http,
    groups,
    refused,
    logLines,
    clock,
    eventsStream: config.events.stream,
    leaseKey: config.lease.key,
    close: async () => {
      await http.close();
      scripted.disconnect();
    },
    add(stream, group) {
      const [spec] = testConfig(redisUrl, prefix, [
        { stream, group, reapConsumersIdleMs: 1000 },
      ]).groups;
      if (spec === undefined) throw new Error("no group");
      const resolved = resolveGroup(spec);
      groups.replace([...groups.current(), resolved]);
      return resolved;
    },
  };
}

export type Answer = AuthAnswer;

/** A plain HTTP request, every header as given (fetch would add or refuse some). */
export function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return authRequest(url, { method, headers, ...(body !== undefined && { body }) });
}

/** The CSRF token of the first action form of a page. */
export function csrfOf(page: string): string {
  const match = /name="csrf" value="([^"]+)"/u.exec(page);
  if (match?.[1] === undefined) throw new Error("no action form on the page");
  return match[1];
}

export function groupPath(group: ResolvedGroup): string {
  return `/ui/group?stream=${encodeURIComponent(group.stream)}&group=${encodeURIComponent(group.group)}`;
}

/** A form POST as a browser sends it from the console's own page (unless headers say otherwise). */
export function postForm(
  server: ActionsServer,
  kind: string,
  authorization: string,
  fields: [string, string][],
  headers: Record<string, string> = {},
): Promise<Answer> {
  const origin = new URL(server.http.url).origin;
  return rawRequest(
    `${server.http.url}/ui/actions/${kind}`,
    "POST",
    {
      authorization,
      origin,
      "sec-fetch-site": "same-origin",
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    },
    new URLSearchParams(fields).toString(),
  );
}

/**
 * One round of the leader's redrive task runner on the actions server's lease (held here as the
 * term says): a batch of `batchSize` for each running task, on a clock that does not move.
 */
export async function leaderRound(
  server: ActionsServer,
  redis: Redis,
  batchSize: number,
): Promise<void> {
  await redis.set(server.leaseKey, "me");
  const term = {
    signal: new AbortController().signal,
    fence: { key: server.leaseKey, value: "me" },
    fencingToken: 1,
  };
  await new RedriveTaskRunner({
    redis: registerScripts(redis),
    leaseKey: server.leaseKey,
    budgetMs: 2,
    currentTerm: () => term,
    logger: pino({ level: "silent" }),
    metrics: createRedriveTaskMetrics(new Registry()),
    events: { write: () => undefined },
    batchSize,
    now: () => 0,
  }).runOnce();
}

/**
 * A group of its own for one test (stream `<prefix name>:orders`, group billing), added to the
 * console, with `count` dead letters of reason max-deliveries.
 */
export async function groupWithDeadLetters(
  redis: Redis,
  server: ActionsServer,
  name: string,
  count: number,
): Promise<ResolvedGroup> {
  const stream = `${uniquePrefix(name)}:orders`;
  await redis.xgroup("CREATE", stream, "billing", "$", "MKSTREAM");
  const group = server.add(stream, "billing");
  await addDeadLetters(redis, {
    stream,
    group: "billing",
    deadLetterStream: group.deadLetterStream,
    count,
  });
  return group;
}
