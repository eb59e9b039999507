import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";

const fixture = useRedisServer();
let daemon: RunningDaemon;

beforeAll(async () => {
  const config = testConfig(fixture.server.url, uniquePrefix("ui-off"), [{}]);
  daemon = await startDaemon(
    { ...config, http: { ...config.http, ui: { ...config.http.ui, enabled: false } } },
    { logger: pino({ level: "silent" }), version: "0.0.0-ui-off", onFatal: () => undefined },
  );
});
afterAll(() => daemon.stop());

it("http.ui.enabled false: /ui and its pages answer 404, /status.json still answers", async () => {
  for (const path of ["/ui", "/ui/group?stream=s&group=g", "/ui/sweeper", "/ui/style.css"]) {
    const response = await fetch(`${daemon.httpUrl}${path}`);
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain("/ui");
  }
  expect((await fetch(`${daemon.httpUrl}/status.json`)).status).toBe(200);
});
