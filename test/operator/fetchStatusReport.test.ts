import { createServer as createHttpServer } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/defaultConfig.js";
import { fetchStatusReport } from "../../src/operations/fetchStatusReport.js";
import { HANG_DEADLINE_MS } from "../support/deadlines.js";
import { freePort } from "../support/redisServer.js";
import { startSilentServer } from "../support/silentServer.js";
import { startFakeJanitor, statusReport, type FakeJanitor } from "../support/statusFixture.js";

const cleanups: (() => Promise<void>)[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sj-status-client-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function janitor(answer: Parameters<typeof startFakeJanitor>[0]): Promise<FakeJanitor> {
  const fake = await startFakeJanitor(answer);
  cleanups.push(fake.close);
  return fake;
}

function http(
  port: number,
  auth: Partial<{ bearerTokenFile: string; basicAuthFile: string }> = {},
) {
  const defaults = defaultConfig().http;
  return { ...defaults, host: "0.0.0.0", port, auth: { ...defaults.auth, ...auth } };
}

describe("fetchStatusReport (the client of GET /status.json)", () => {
  it("asks http.host:http.port (0.0.0.0 meaning 127.0.0.1) and keeps the body as served", async () => {
    const body = JSON.stringify(statusReport([{}]), null, 1);
    const fake = await janitor(() => ({ status: 200, body }));
    const answer = await fetchStatusReport(http(fake.port), { timeoutMs: 1000 });
    expect(answer).toMatchObject({ ok: true, url: `http://127.0.0.1:${fake.port}/status.json` });
    if (!answer.ok) throw new Error(answer.problem);
    expect(answer.body).toBe(body);
    expect(answer.report.groups[0]?.status).toBe("OK");
    expect(fake.authorizations).toEqual([""]);
  });

  it("takes --url instead, with or without /status.json", async () => {
    const fake = await janitor(() => ({ status: 200, body: JSON.stringify(statusReport([])) }));
    for (const url of [fake.url, `${fake.url}/`, `${fake.url}/status.json`]) {
      const answer = await fetchStatusReport(http(1), { url, timeoutMs: 1000 });
      expect(answer).toMatchObject({ ok: true, url: `${fake.url}/status.json` });
    }
  });

  it("sends the bearer token file's content, trimmed, or the first user:password line as Basic", async () => {
    const fake = await janitor(() => ({ status: 200, body: JSON.stringify(statusReport([])) }));
    const token = join(dir, "token");
    const users = join(dir, "users");
    await writeFile(token, "s3cret-token\n");
    await writeFile(users, "\nprometheus:pa:ss\nother:x\n");
    await fetchStatusReport(http(fake.port, { bearerTokenFile: token }), { timeoutMs: 1000 });
    await fetchStatusReport(http(fake.port, { basicAuthFile: users }), { timeoutMs: 1000 });
    expect(fake.authorizations).toEqual([
      "Bearer s3cret-token",
      `Basic ${Buffer.from("prometheus:pa:ss").toString("base64")}`,
    ]);
  });

  it("names the http.auth key of a credentials file it cannot read, and sends nothing", async () => {
    const fake = await janitor(() => ({ status: 200, body: JSON.stringify(statusReport([])) }));
    const missing = join(dir, "no-such-token");
    const answer = await fetchStatusReport(http(fake.port, { bearerTokenFile: missing }), {
      timeoutMs: 1000,
    });
    expect(answer).toMatchObject({ ok: false, unreachable: false });
    if (!answer.ok) expect(answer.problem).toMatch(/http\.auth\.bearerTokenFile .*ENOENT/u);
    expect(fake.authorizations).toEqual([]);
  });

  it("names http.auth when the janitor refuses (401, 403)", async () => {
    for (const status of [401, 403]) {
      const fake = await janitor(() => ({ status, body: "no" }));
      const answer = await fetchStatusReport(http(fake.port), { timeoutMs: 1000 });
      expect(answer.ok).toBe(false);
      if (answer.ok) continue;
      expect(answer.problem).toContain(`HTTP ${status}`);
      expect(answer.problem).toContain("http.auth");
      expect(answer.unreachable).toBe(false);
    }
  });

  it("says which URL did not answer, that `run` must be running, and suggests --url", async () => {
    const port = await freePort();
    const answer = await fetchStatusReport(http(port), { timeoutMs: 1000 });
    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.unreachable).toBe(true);
    expect(answer.problem).toContain(`http://127.0.0.1:${port}/status.json`);
    expect(answer.problem).toContain("stream-janitor run");
    expect(answer.problem).toContain("--url");
  });

  it("gives up after the timeout when the janitor does not answer", async () => {
    // Accepts the connection and never answers.
    const silent = await startSilentServer();
    cleanups.push(silent.close);
    const { port } = silent;
    const started = Date.now();
    const answer = await fetchStatusReport(http(port), { timeoutMs: 200 });
    // Its own 200 ms timeout ended the wait (the problem says so); the deadline only fails a hang.
    expect(Date.now() - started).toBeLessThan(HANG_DEADLINE_MS);
    expect(answer).toMatchObject({ ok: false, unreachable: true });
    if (!answer.ok) expect(answer.problem).toContain("within 200ms");
  });

  it("refuses a body that is not a status report", async () => {
    for (const body of ["<html>", '{"groups":3}']) {
      const fake = await janitor(() => ({ status: 200, body }));
      const answer = await fetchStatusReport(http(fake.port), { timeoutMs: 1000 });
      expect(answer).toMatchObject({ ok: false, unreachable: false });
      if (!answer.ok) expect(answer.problem).toContain("not a status report");
    }
  });

  it("reports other HTTP errors with their status", async () => {
    const fake = await janitor(() => ({ status: 500, body: "boom" }));
    const answer = await fetchStatusReport(http(fake.port), { timeoutMs: 1000 });
    expect(answer).toMatchObject({ ok: false, unreachable: false });
    if (!answer.ok) expect(answer.problem).toContain("HTTP 500");
  });
  it("reaches a janitor on a port fetch() refuses (the Fetch standard's bad ports, 6665-6669)", async () => {
    const body = JSON.stringify(statusReport([]));
    const server = createHttpServer((_, response) => response.end(body));
    let port: number | undefined;
    for (const candidate of [6665, 6666, 6667, 6668, 6669]) {
      const listening = await new Promise<boolean>((resolve) => {
        server.once("error", () => resolve(false));
        server.listen(candidate, "127.0.0.1", () => resolve(true));
      });
      if (listening) {
        port = candidate;
        break;
      }
    }
    if (port === undefined) throw new Error("ports 6665-6669 all taken on this machine");
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const answer = await fetchStatusReport(http(port), { timeoutMs: 1000 });
    expect(answer).toMatchObject({ ok: true });
  });
});
