import { once } from "node:events";
import { createServer, type Socket } from "node:net";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { HTTP_LIMITS, startHttpServer } from "../../src/http/createHttpServer.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { testConfig } from "../support/testConfig.js";
import { defaultConfig } from "../../src/config/defaultConfig.js";
import { halfOpen } from "../support/halfOpen.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("HTTP under a connection flood", () => {
  it("answers /livez within 2 s while 3,000 half-open connections hold the port, with open connections capped", async () => {
    const http = await startHttpServer({
      host: "127.0.0.1",
      port: 0,
      registry: new Registry(),
      logger: pino({ level: "silent" }),
      beforeScrape: () => Promise.resolve(),
      isReady: () => Promise.resolve(true),
    });
    const sockets: Socket[] = [];
    cleanups.push(() => http.close());
    cleanups.push(() => sockets.forEach((socket) => socket.destroy()));
    const { port } = new URL(http.url);
    for (let batch = 0; batch < 30; batch += 1) {
      sockets.push(...(await Promise.all(Array.from({ length: 100 }, () => halfOpen(+port)))));
    }
    expect(sockets).toHaveLength(3000);

    // Without the connection limit the server would answer only once the headers timeout freed
    // half-open sockets: the bound is that timeout, not a margin a busy machine can eat.
    const startedAt = performance.now();
    const response = await fetch(`${http.url}/livez`, {
      signal: AbortSignal.timeout(HTTP_LIMITS.HEADERS_TIMEOUT_MS),
    });
    const elapsedMs = performance.now() - startedAt;
    console.log(`/livez under 3,000 half-open connections: ${elapsedMs.toFixed(0)} ms`);
    expect(response.status).toBe(200);
    expect(elapsedMs).toBeLessThan(HTTP_LIMITS.HEADERS_TIMEOUT_MS);
    const open = await new Promise<number>((resolve, reject) =>
      http.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
    expect(open).toBeLessThanOrEqual(HTTP_LIMITS.MAX_CONNECTIONS);
    expect(http.server.headersTimeout).toBe(HTTP_LIMITS.HEADERS_TIMEOUT_MS);
    expect(http.server.requestTimeout).toBe(HTTP_LIMITS.REQUEST_TIMEOUT_MS);
    expect(http.server.keepAliveTimeout).toBe(HTTP_LIMITS.KEEP_ALIVE_TIMEOUT_MS);
  });

  it("closes a connection that never finishes its headers (slow-loris) after the headers timeout", async () => {
    const http = await startHttpServer({
      host: "127.0.0.1",
      port: 0,
      registry: new Registry(),
      logger: pino({ level: "silent" }),
      beforeScrape: () => Promise.resolve(),
      isReady: () => Promise.resolve(true),
    });
    cleanups.push(() => http.close());
    // Before the connection exists: the server's headers clock cannot start earlier.
    const openedAt = performance.now();
    const socket = await halfOpen(+new URL(http.url).port);
    cleanups.push(() => {
      socket.destroy();
    });
    await once(socket, "close");
    const heldMs = performance.now() - openedAt;
    // Closed by the headers timeout: not before it, and before the request timeout (the next
    // one that would close it) could. A busy machine only makes the close later.
    expect(heldMs).toBeGreaterThanOrEqual(HTTP_LIMITS.HEADERS_TIMEOUT_MS);
    expect(heldMs).toBeLessThan(HTTP_LIMITS.REQUEST_TIMEOUT_MS);
  });

  it("EADDRINUSE: run exits with one line naming http.port, no stack trace", async () => {
    const blocker = createServer();
    blocker.listen(0, "127.0.0.1");
    await once(blocker, "listening");
    cleanups.push(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const address = blocker.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const config = testConfig("redis://127.0.0.1:1", "addrinuse", [{}], {
      http: { ...defaultConfig().http, host: "127.0.0.1", port },
    });
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);
    const result = await runCli(["run", "--config", file.path]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual([
      `stream-janitor: cannot listen on http.host 127.0.0.1, http.port ${port} (EADDRINUSE): another process already listens there; set http.port (STREAM_JANITOR_HTTP_PORT) or http.host`,
    ]);
    expect(result.stdout).not.toMatch(/\n\s+at /u);
  });
});
