import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GroupSet } from "../../src/core/GroupSet.js";
import type { StatusBoard } from "../../src/core/groupStatus.js";
import { resolveGroup } from "../../src/core/resolveGroup.js";
import type { RunningHttpServer } from "../../src/http/createHttpServer.js";
import { startRouteServer } from "../support/startRouteServer.js";
import { createConsoleRoute } from "../../src/ui/createConsole.js";
import { SweepLog } from "../../src/ui/SweepLog.js";
import { addStuckEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";
import { fabricatedGroup, fabricatedReport } from "./fabricatedReport.js";

const fixture = useRedisServer();
const prefix = uniquePrefix("console");
const stream = `${prefix}:<orders>`;
const group = `bill"ing`;
let http: RunningHttpServer;
let showBodies = false;

beforeAll(async () => {
  const { redis } = fixture;
  const config = testConfig(fixture.server.url, prefix, [
    { stream, group, reapConsumersIdleMs: 1 },
  ]);
  const resolved = config.groups.map(resolveGroup);
  const ids = await addStuckEntries(
    redis,
    stream,
    group,
    [
      ["n", "1"],
      ["n", "2"],
      ["n", "3"],
    ],
    {
      consumer: "<img src=x onerror=alert(1)>",
      idleMs: 120_000,
      deliveries: 3,
    },
  );
  // One pending entry deleted behind the group's back: a ghost.
  await redis.xdel(stream, ids[1] ?? "");
  await redis.xgroup("CREATECONSUMER", stream, group, "idle-one");
  const target = resolved[0];
  if (target === undefined) throw new Error("no group");
  await addDeadLetters(redis, {
    stream,
    group,
    deadLetterStream: target.deadLetterStream,
    count: 2,
  });
  await addDeadLetters(redis, {
    stream,
    group,
    deadLetterStream: target.deadLetterStream,
    count: 1,
    reason: "action",
    firstOriginal: 10,
  });
  await redis.xadd(
    config.events.stream,
    "*",
    ...["type", "dead-lettered", "at", "1", "by", "me", "stream", stream, "group", group],
    ...["count", "3", "ids", "", "detail", '{"reason":"max-deliveries"}'],
  );
  const board: StatusBoard = {
    report: () => fabricatedReport([fabricatedGroup(stream, group, "STUCK", { pending: 3 })]),
    statusOf: (id) =>
      id === target.id ? fabricatedGroup(stream, group, "STUCK", { pending: 3 }) : undefined,
  };
  http = await startRouteServer([
    createConsoleRoute({
      board,
      sweeps: new SweepLog(),
      groups: new GroupSet(resolved),
      redis: fixture.server.client(),
      config: {
        ...config,
        http: {
          ...config.http,
          ui: {
            ...config.http.ui,
            enabled: true,
            get showBodies() {
              return showBodies;
            },
          },
        },
      },
    }),
  ]);
});
afterAll(() => http.close());

async function page(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${http.url}${path}`, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const groupPath = `/ui/group?stream=${encodeURIComponent(stream)}&group=${encodeURIComponent(group)}`;

describe("the group page", () => {
  it("shows consumers, the oldest pending entries with the ghost, dead letters by reason, events", async () => {
    const { status, text, headers } = await page(groupPath);
    expect(status).toBe(200);
    expect(headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(text).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(text).not.toContain("<img");
    expect(text).toContain("idle-one");
    expect(text.match(/<span class="status s-ERROR">ghost<\/span>/gu)).toHaveLength(1);
    expect(text).toContain('max-deliveries <span class="muted">(2)</span>');
    expect(text).toContain('action <span class="muted">(1)</span>');
    expect(text).toContain("dead-lettered");
    expect(text).toContain("Bodies are not shown");
    expect(text).not.toContain("ff00fe");
    // The reapable column: idle-one owns nothing and idled past 1 ms.
    expect(text).toMatch(/idle-one<\/td>.*?<td>yes<\/td>/su);
    expect(text).toContain(
      `stream-janitor dlq redrive --stream &#39;${prefix}:&lt;orders&gt;&#39; --group &#39;bill&quot;ing&#39; --dry-run`,
    );
  });

  it("shows bodies only with showBodies: binary as hex", async () => {
    showBodies = true;
    try {
      const { text } = await page(groupPath);
      expect(text).toContain("ff00fe");
      expect(text).toContain("value with spaces");
    } finally {
      showBodies = false;
    }
  });

  it("answers 404 for a group it does not know", async () => {
    const { status, text } = await page(`/ui/group?stream=nope&group=%3Cb%3E`);
    expect(status).toBe(404);
    expect(text).toContain("<code>&lt;b&gt;</code>");
  });
});

describe("the console over HTTP", () => {
  it("serves the overview gzipped on request, the stylesheet cacheable, nothing but GET", async () => {
    const raw = await fetch(`${http.url}/ui`, { headers: { "accept-encoding": "gzip" } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const plain = await page("/ui");
    expect(plain.text).toContain("s-STUCK");
    const css = await page("/ui/style.css");
    expect(css.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(css.text).toContain("prefers-color-scheme: dark");
    const post = await fetch(`${http.url}/ui`, { method: "POST" });
    expect(post.status).toBe(405);
    const sweeper = await page("/ui/sweeper");
    expect(sweeper.text).toContain("nobody (the lease is free)");
  });

  it("sends the overview compressed", async () => {
    const { get } = await import("node:http");
    const body = await new Promise<Buffer>((resolve, reject) => {
      get(`${http.url}/ui`, { headers: { "accept-encoding": "gzip" } }, (response) => {
        expect(response.headers["content-encoding"]).toBe("gzip");
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve(Buffer.concat(chunks)));
      }).on("error", reject);
    });
    expect(gunzipSync(body).toString()).toContain("<!doctype html>");
  });
});
