import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmod, mkdtemp, mkdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

describe("the command the README documents", () => {
  it("node_modules/.bin/stream-janitor run stops on SIGTERM (exit 0) and releases the lease", async () => {
    // What `npm install stream-janitor` lays out: an executable link to dist/cli.js.
    const project = await mkdtemp(join(tmpdir(), "sj-install-"));
    const prefix = uniquePrefix("bin");
    const config = await writeConfigFile(testConfig(fixture.server.url, prefix, [{}]));
    try {
      await mkdir(join(project, "node_modules", ".bin"), { recursive: true });
      await chmod(CLI, 0o755);
      const bin = join(project, "node_modules", ".bin", "stream-janitor");
      await symlink(CLI, bin);
      const child = spawn(bin, ["run", "--config", config.path], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const exited = once(child, "exit");
      await waitFor(() => output.includes('"msg":"lease acquired"'), {
        what: "the daemon to lead",
      });
      child.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
      expect(output).toContain('"msg":"stopped"');
      // Released on the way out, not left to expire: no orphan holds it.
      expect(await fixture.redis.exists(`${prefix}:lease`)).toBe(0);
    } finally {
      await config.remove();
      await rm(project, { recursive: true, force: true });
    }
  });
});
