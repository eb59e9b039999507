import { pino } from "pino";
import { Counter, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../src/config/httpCredentials.js";
import { startHttpServer, type RunningHttpServer } from "../../src/http/createHttpServer.js";
import { HttpAuthGuard } from "../../src/http/HttpAuthGuard.js";
import type { HttpRoute } from "../../src/http/HttpRoute.js";
import { send } from "../../src/http/send.js";
import { authRequest, basic } from "../support/authRequest.js";

/** http.auth with roles: the guard names the caller, the route gets it; POST only where taken. */
const whoami: HttpRoute = {
  name: "/whoami",
  matches: (path) => path === "/whoami" || path === "/act",
  acceptsPost: (path) => path === "/act",
  handle: (request, response, caller) => {
    send(response, 200, JSON.stringify({ method: request.method, ...caller }));
    return Promise.resolve();
  },
};

let http: RunningHttpServer;

beforeAll(async () => {
  const registry = new Registry();
  const logger = pino({ level: "silent" });
  const guard = new HttpAuthGuard({
    credentials: [
      { role: "viewer", credentials: { scheme: "Bearer", digests: [sha256("old")] } },
      {
        role: "viewer",
        credentials: { scheme: "Basic", digests: [sha256("grafana:pw")], names: ["grafana"] },
      },
      {
        role: "operator",
        credentials: {
          scheme: "Bearer",
          digests: [sha256("tok-a"), sha256("old")],
          names: ["alice", "token-2"],
        },
      },
    ],
    logger,
    refusals: new Counter({ name: "refused_total", help: "h", registers: [registry] }),
  });
  http = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    registry,
    logger,
    beforeScrape: () => Promise.resolve(),
    isReady: () => Promise.resolve(true),
    routes: [whoami],
    auth: guard,
  });
});
afterAll(() => http.close());

function ask(path: string, authorization: string, method = "GET") {
  return authRequest(`${http.url}${path}`, { method, authorization });
}

describe("http.auth roles", () => {
  it("names the caller and the role of the file that accepted them; a credential in two files acts as the higher role", async () => {
    const viewer = JSON.parse((await ask("/whoami", basic("grafana:pw"))).text) as object;
    expect(viewer).toMatchObject({ role: "viewer", name: "grafana" });
    const alice = JSON.parse((await ask("/whoami", "Bearer tok-a")).text) as object;
    expect(alice).toMatchObject({ role: "operator", name: "alice" });
    const both = JSON.parse((await ask("/whoami", "Bearer old")).text) as { identity: string };
    expect(both).toMatchObject({ role: "operator", name: "token-2" });
    // The identity names the credential, never its secret.
    expect(both.identity).not.toContain("old");
  });

  it("refuses unknown credentials with the Basic challenge (a browser then asks for a login)", async () => {
    const refused = await ask("/whoami", "Bearer nope");
    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe('Basic realm="stream-janitor"');
  });

  it("takes a POST only where the route says so: elsewhere, and on the built-in paths, 405", async () => {
    const acted = await ask("/act", "Bearer tok-a", "POST");
    expect(acted.status).toBe(200);
    expect(JSON.parse(acted.text)).toMatchObject({ method: "POST", name: "alice" });
    expect((await ask("/whoami", "Bearer tok-a", "POST")).status).toBe(405);
    expect((await ask("/metrics", "Bearer tok-a", "POST")).status).toBe(405);
  });
});
