import { describe, expect, it } from "vitest";
import { runCli } from "../support/daemonProcess.js";

/** No --config and no STREAM_JANITOR_CONFIG, whatever the environment running the tests has. */
const NO_CONFIG_ENV = { STREAM_JANITOR_CONFIG: undefined };

describe("a command without a configuration", () => {
  it.each([
    [["run"]],
    [["sweep"]],
    [["check-config"]],
    [["inspect"]],
    [["status"]],
    [["dlq", "list", "--stream", "s", "--group", "g"]],
    [["dlq", "redrive", "--stream", "s", "--group", "g"]],
    [["dlq", "purge", "--stream", "s", "--group", "g", "--older-than-ms", "1000"]],
    [["consumers", "reap", "--stream", "s", "--group", "g", "--idle-ms", "1000"]],
    [["trim", "--stream", "s", "--max-len", "10"]],
  ])("%j exits 78 naming --config and STREAM_JANITOR_CONFIG", async (args) => {
    const result = await runCli(args, NO_CONFIG_ENV);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("--config");
    expect(result.stderr).toContain("STREAM_JANITOR_CONFIG");
    expect(result.stderr).not.toContain("max retries");
    expect(result.stderr).not.toMatch(/\n\s+at /u);
  });
});
