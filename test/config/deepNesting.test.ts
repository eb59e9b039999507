import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/daemonProcess.js";
import { makeTempDir, type TempDir } from "./configFiles.js";

const NESTED = "at most 100 levels of nested arrays and mappings";

/** `check-config --offline` on a file: its exit code and stderr. */
async function check(dir: TempDir, name: string, content: string) {
  const path = await dir.write(name, content);
  return runCli(["check-config", "--offline", "--config", path]);
}

describe("a configuration file nested too deeply", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("JSON: 100,000 nested arrays exit 78 naming the problem, not 1 with a RangeError", async () => {
    const n = 100_000;
    const result = await check(dir, "arrays.json", `{"groups":${"[".repeat(n)}${"]".repeat(n)}}`);
    expect(result.stderr).not.toMatch(/RangeError|Maximum call stack/u);
    expect(result.stderr).toContain(`arrays.json: expected ${NESTED}`);
    expect(result.code).toBe(78);
  });

  it("JSON: 100,000 nested objects under a key", async () => {
    const n = 100_000;
    const text = `{"redis":${'{"a":'.repeat(n)}1${"}".repeat(n)}}`;
    const result = await check(dir, "objects.json", text);
    expect(result.stderr).not.toMatch(/RangeError|Maximum call stack/u);
    expect(result.stderr).toContain(`objects.json: expected ${NESTED}`);
    expect(result.code).toBe(78);
  });

  it("YAML: flow and block nesting", async () => {
    const n = 100_000;
    const flow = await check(dir, "flow.yaml", `groups: ${"[".repeat(n)}${"]".repeat(n)}\n`);
    expect(flow.stderr).not.toMatch(/RangeError|Maximum call stack/u);
    expect(flow.stderr).toContain(`flow.yaml: expected ${NESTED}`);
    expect(flow.code).toBe(78);
    const lines = Array.from({ length: 1500 }, (_, i) => `${" ".repeat(i)}- `).join("\n");
    const block = await check(dir, "block.yaml", `groups:\n${lines}\n`);
    expect(block.stderr).not.toMatch(/RangeError|Maximum call stack/u);
    expect(block.stderr).toContain(`block.yaml: expected ${NESTED}`);
    expect(block.code).toBe(78);
  });

  it("a moderate depth (150) is refused the same way; a real configuration passes", async () => {
    const n = 150;
    const result = await check(dir, "some.json", `{"groups":${"[".repeat(n)}${"]".repeat(n)}}`);
    expect(result.stderr).toContain(`some.json: expected ${NESTED}`);
    expect(result.code).toBe(78);
    const fine = await check(
      dir,
      "fine.json",
      JSON.stringify({ groups: [{ stream: "orders", group: "billing" }] }),
    );
    expect(fine.stderr).toBe("");
    expect(fine.code).toBe(0);
  });
});
