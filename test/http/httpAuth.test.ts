import type { ServerResponse } from "node:http";
import { Writable } from "node:stream";
import { pino } from "pino";
import { Counter, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256, type HttpCredentials } from "../../src/config/httpCredentials.js";
import { startHttpServer, type RunningHttpServer } from "../../src/http/createHttpServer.js";
import { HttpAuthGuard, REFUSAL_LOG_INTERVAL_MS } from "../../src/http/HttpAuthGuard.js";
import type { HttpRoute } from "../../src/http/HttpRoute.js";
import { send } from "../../src/http/send.js";
import { authRequest, basic } from "../support/authRequest.js";

/** A route beyond the built-in three, as /status.json and /ui are. */
const statusRoute: HttpRoute = {
  name: "/status.json",
  matches: (path) => path === "/status.json",
  handle: (_request, response: ServerResponse) => {
    send(response, 200, '{"groups":[]}', "application/json");
    return Promise.resolve();
  },
};

interface Served {
  http: RunningHttpServer;
  guard: HttpAuthGuard;
  refusals: Counter;
  logLines: Record<string, unknown>[];
  clock: { now: number };
}

async function serve(credentials: HttpCredentials): Promise<Served> {
  const registry = new Registry();
  const refusals = new Counter({ name: "refused_total", help: "h", registers: [registry] });
  const logLines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: "info" }, destination);
  const clock = { now: 1_000_000 };
  const guard = new HttpAuthGuard({ credentials, logger, refusals, now: () => clock.now });
  const http = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    registry,
    logger,
    beforeScrape: () => Promise.resolve(),
    isReady: () => Promise.resolve(true),
    routes: [statusRoute],
    auth: guard,
  });
  return { http, guard, refusals, logLines, clock };
}

async function get(
  served: Served,
  path: string,
  authorization?: string,
): Promise<{ status: number; challenge: string | null; body: string }> {
  const { status, challenge, text } = await authRequest(`${served.http.url}${path}`, {
    ...(authorization !== undefined && { authorization }),
  });
  return { status, challenge, body: text };
}

async function refusedCount(served: Served): Promise<number> {
  return (await served.refusals.get()).values[0]?.value ?? 0;
}

describe("http.auth with a bearer token", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve({ scheme: "Bearer", digests: [sha256("s3cret-t0ken")] });
  });
  afterAll(() => served.http.close());

  it("serves /metrics, extra routes and the 404 to the right token, the scheme in any case", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      expect((await get(served, "/metrics", `${scheme} s3cret-t0ken`)).status).toBe(200);
    }
    expect(await get(served, "/status.json", "Bearer s3cret-t0ken")).toMatchObject({
      status: 200,
      body: '{"groups":[]}',
    });
    expect((await get(served, "/nowhere", "Bearer s3cret-t0ken")).status).toBe(404);
  });

  it("answers 401 with the Bearer challenge to a missing, wrong or malformed token, on every path", async () => {
    const attempts = [undefined, "Bearer wrong", "Bearer s3cret-t0ke", "s3cret-t0ken"];
    attempts.push("Bearers3cret-t0ken", "Basic s3cret-t0ken", basic("s3cret-t0ken:x"));
    for (const path of ["/metrics", "/status.json", "/nowhere", "/ui/group?x=1", "/"]) {
      for (const authorization of attempts) {
        const answer = await get(served, path, authorization);
        // The 401 says nothing about the path: an unknown one looks like a known one.
        expect(answer).toEqual({ status: 401, challenge: "Bearer", body: "unauthorized\n" });
      }
    }
  });

  it("leaves /livez and /readyz open: probes carry no credentials", async () => {
    expect(await get(served, "/livez")).toMatchObject({ status: 200, body: "ok\n" });
    expect(await get(served, "/readyz")).toMatchObject({ status: 200, body: "ready\n" });
    expect((await get(served, "/livez", "Bearer wrong")).status).toBe(200);
  });

  it("refuses other methods without credentials with 401 rather than 405", async () => {
    const response = await fetch(`${served.http.url}/metrics`, { method: "POST" });
    expect(response.status).toBe(401);
  });

  it("takes a replaced token (a SIGHUP re-read) from the next request on", async () => {
    served.guard.replaceCredentials({ scheme: "Bearer", digests: [sha256("rotated")] });
    expect((await get(served, "/metrics", "Bearer rotated")).status).toBe(200);
    expect((await get(served, "/metrics", "Bearer s3cret-t0ken")).status).toBe(401);
    served.guard.replaceCredentials({ scheme: "Bearer", digests: [sha256("s3cret-t0ken")] });
  });
});

describe("http.auth with a basic auth file", () => {
  let served: Served;
  beforeAll(async () => {
    const lines = ["prometheus:scrape-pw", "alice:a:b:c"];
    served = await serve({ scheme: "Basic", digests: lines.map(sha256) });
  });
  afterAll(() => served.http.close());

  it("serves any user of the file with that user's password", async () => {
    expect((await get(served, "/metrics", basic("prometheus:scrape-pw"))).status).toBe(200);
    expect((await get(served, "/status.json", basic("alice:a:b:c"))).status).toBe(200);
    expect((await get(served, "/metrics", basic("alice:a:b:c").toLowerCase())).status).toBe(401);
  });

  it("answers 401 with the Basic challenge to a wrong password, an unknown user or a malformed header", async () => {
    const attempts = [
      undefined,
      basic("prometheus:wrong"),
      basic("prometheus:a:b:c"),
      basic("mallory:scrape-pw"),
      basic("prometheus"),
      "Basic not-base64!",
      "Bearer scrape-pw",
      `Basic ${Buffer.from("prometheus:scrape-pw").toString("base64")} extra`,
    ];
    for (const authorization of attempts) {
      expect(await get(served, "/metrics", authorization)).toEqual({
        status: 401,
        challenge: 'Basic realm="stream-janitor"',
        body: "unauthorized\n",
      });
    }
    expect((await get(served, "/readyz")).status).toBe(200);
  });
});

describe("refusals", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve({ scheme: "Bearer", digests: [sha256("t")] });
  });
  afterAll(() => served.http.close());

  it("counts every refusal, logs the first of an episode at warn with the remote address, and never the secret", async () => {
    const warnings = (): Record<string, unknown>[] =>
      served.logLines.filter((line) => line.level === 40);
    for (let i = 0; i < 20; i += 1) await get(served, "/metrics", `Bearer guess-${i}`);
    expect(await refusedCount(served)).toBe(20);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ remoteAddress: "127.0.0.1", refused: 1 });

    // A minute later a new episode: one more line, which says how many came in between.
    served.clock.now += REFUSAL_LOG_INTERVAL_MS;
    await get(served, "/metrics", "Bearer guess-again");
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({ refused: 20 });
    expect(await refusedCount(served)).toBe(21);

    // Good requests and open paths are not refusals.
    await get(served, "/metrics", "Bearer t");
    await get(served, "/livez");
    expect(await refusedCount(served)).toBe(21);
    expect(JSON.stringify(served.logLines)).not.toContain("guess-");
  });
});
