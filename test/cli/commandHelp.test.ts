import { describe, expect, it } from "vitest";
import { runCli } from "../support/daemonProcess.js";

/** No --config and no STREAM_JANITOR_CONFIG, whatever the environment running the tests has. */
const NO_CONFIG_ENV = { STREAM_JANITOR_CONFIG: undefined };

describe("--help of the daemon's commands", () => {
  it.each([
    ["run", "SIGHUP"],
    ["sweep", "--json"],
    ["check-config", "--offline"],
    ["status", "--url"],
  ])("%s --help prints its own options and examples", async (command, option) => {
    const result = await runCli([command, "--help"], NO_CONFIG_ENV);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: stream-janitor ${command} `, "u"));
    expect(result.stdout).toContain("--config FILE");
    expect(result.stdout).toContain(option);
    expect(result.stdout).toContain("Examples:");
    // Not the global usage, which lists every command.
    expect(result.stdout).not.toContain("stream-janitor dlq purge");
  });
});
