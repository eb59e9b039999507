import { spawnSync } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { missingRedisServer } from "./requireTools.js";

describe("npm test without redis-server", () => {
  it("says in one line how to install it", () => {
    const message = missingRedisServer("/nonexistent:/also-missing");
    expect(message).toMatch(/^npm test needs redis-server .*apt-get install redis-server/u);
    expect(message?.split("\n")).toHaveLength(1);
    expect(missingRedisServer(process.env.PATH)).toBeUndefined();
  });
});

describe("the global setup without redis-server on PATH", () => {
  it("stops the run with that one line and exit 1, before any test starts", async () => {
    // A PATH holding only node: vitest runs, the global setup must refuse at once.
    const bin = await mkdtemp(join(tmpdir(), "sj-path-"));
    try {
      await symlink(process.execPath, join(bin, "node"));
      const result = spawnSync(
        process.execPath,
        [
          "node_modules/vitest/vitest.mjs",
          "run",
          "--config",
          "test/vitest.config.ts",
          "test/support/requireTools.test.ts",
        ],
        { env: { ...process.env, PATH: bin }, encoding: "utf8", timeout: 60_000 },
      );
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("npm test needs redis-server");
      expect(result.stdout + result.stderr).not.toContain("ENOENT");
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });
});
