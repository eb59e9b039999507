import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeResolveHooks } from "../support/resolveHooks.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Issue 33, item 11: `--version` answers before any command is known, so it loads none of the
 * command specs (their help texts and option checks): only cli.js and what reads the version.
 * A resolve hook (registered with --import) logs every module URL the child resolves.
 */
const DIST = new URL("../../dist/", import.meta.url).href;
const CLI = new URL("cli.js", DIST).pathname;

let dir: string;
let register: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sj-version-startup-"));
  register = await writeResolveHooks(dir);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The modules of dist/ the CLI resolves for args, relative to dist/, and its stdout. */
async function distModulesOf(args: readonly string[]) {
  const log = join(dir, `resolved-${args.join("-")}.txt`);
  await writeFile(log, "");
  const child = spawn(process.execPath, ["--import", register, CLI, ...args], {
    env: { ...process.env, SJ_RESOLVED_LOG: log },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  const [code] = (await once(child, "exit")) as [number | null];
  const urls = (await readFile(log, "utf8")).split("\n").filter((url) => url.startsWith(DIST));
  return { code, stdout, modules: [...new Set(urls.map((url) => url.slice(DIST.length)))].sort() };
}

describe("--version", () => {
  it("loads only cli.js and what reads the version: no command spec", async () => {
    const result = await distModulesOf(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+/u);
    expect(result.modules).toEqual(["cli.js", "commands/exitCodes.js", "commands/readVersion.js"]);
  });
});
