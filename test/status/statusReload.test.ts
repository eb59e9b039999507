import { describe, expect, it } from "vitest";
import { settingsNeedingRestart } from "../../src/daemon/configReload.js";
import { testConfig } from "../support/testConfig.js";

describe("status.* on SIGHUP", () => {
  it("is read when the sampler is built: a reload that changes it names the keys to restart for", () => {
    const running = testConfig("redis://127.0.0.1:1", "status-reload");
    const next = { ...running, status: { ...running.status, intervalMs: 5000, window: 4 } };
    expect(settingsNeedingRestart(running, next)).toEqual(["status.intervalMs", "status.window"]);
  });
});
