import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeResolveHooks } from "../support/resolveHooks.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

/**
 * Issue 22, item 6: the CLI loads only what the command it runs needs. A resolve hook (registered
 * with --import) appends every module URL the child resolves to a file; the test reads which
 * packages of node_modules were among them.
 */
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const RUNTIME_PACKAGES = [
  "ioredis",
  "pino",
  "prom-client",
  "convict",
  "yaml",
  "redlock",
  "cli-progress",
] as const;

const fixture = useRedisServer();
let dir: string;
let register: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sj-lazy-loading-"));
  register = await writeResolveHooks(dir);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let runs = 0;

/**
 * Runs the CLI with the hook; resolves to its exit code, the packages it loaded, and those of
 * them the ESM loader resolved (an `import`, rather than require()).
 */
async function packagesLoadedBy(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; packages: string[]; imported: string[] }> {
  runs += 1;
  const log = join(dir, `resolved-${runs}.txt`);
  await writeFile(log, "");
  const child = spawn(process.execPath, ["--import", register, CLI, ...args], {
    env: { ...process.env, STREAM_JANITOR_CONFIG: undefined, ...env, SJ_RESOLVED_LOG: log },
    stdio: "ignore",
  });
  const [code] = (await once(child, "exit")) as [number | null];
  const urls = (await readFile(log, "utf8")).split("\n");
  const inPackage = (name: string) => (url: string) => url.includes(`/node_modules/${name}/`);
  const packages = RUNTIME_PACKAGES.filter((name) => urls.some(inPackage(name)));
  const imports = urls.filter((url) => !url.startsWith("require "));
  const imported = RUNTIME_PACKAGES.filter((name) => imports.some(inPackage(name)));
  return { code, packages, imported };
}

describe("the CLI loads only the command it runs", () => {
  it.each([
    [["--version"]],
    [["--help"]],
    [["run", "--help"]],
    [["sweep", "--help"]],
    [["check-config", "--help"]],
    [["inspect", "--help"]],
    [["dlq", "--help"]],
    [["dlq", "purge", "--help"]],
    [["dlq", "redrive", "--help"]],
    [["consumers", "reap", "--help"]],
    [["trim", "--help"]],
    [["status", "--help"]],
  ])("%j loads none of the runtime packages", async (args) => {
    const result = await packagesLoadedBy(args);
    expect(result.code).toBe(0);
    expect(result.packages).toEqual([]);
  });

  it("--help loads the command specs, none of the code they run", async () => {
    const log = join(dir, "resolved-help-layers.txt");
    await writeFile(log, "");
    const child = spawn(process.execPath, ["--import", register, CLI, "--help"], {
      env: { ...process.env, SJ_RESOLVED_LOG: log },
      stdio: "ignore",
    });
    const [code] = (await once(child, "exit")) as [number | null];
    const dist = new URL("../../dist/", import.meta.url).href;
    const layers = (await readFile(log, "utf8"))
      .split("\n")
      .filter((url) => url.startsWith(dist))
      .map((url) => url.slice(dist.length).split("/")[0] ?? "");
    expect(code).toBe(0);
    // Issue 33, item 11: a spec (help, options, checks) reaches the domain's names (core/) and
    // duration parsing (config/), no Redis code, no script and no operation.
    expect([...new Set(layers)].sort()).toEqual(["cli.js", "commands", "config", "core"]);
  });

  it.each([[["trim", "--stream", "s"]], [["bogus"]], [["sweep", "--nope"]]])(
    "a usage error (%j) loads none of them either",
    async (args) => {
      const result = await packagesLoadedBy(args);
      expect(result.code).toBe(2);
      expect(result.packages).toEqual([]);
    },
  );

  it("inspect with a JSON file loads the client and convict, nothing else: no logger", async () => {
    const prefix = uniquePrefix("lazy-inspect");
    const config = join(dir, "inspect.json");
    await writeFile(config, JSON.stringify({ groups: [{ stream: `${prefix}:s`, group: "g" }] }));
    const result = await packagesLoadedBy(["inspect", "--config", config], {
      STREAM_JANITOR_REDIS_URL: fixture.server.url,
    });
    expect(result.code).toBe(0);
    // Issue 33, item 11: an operator command logs nothing, so it never loads pino.
    expect(result.packages).toEqual(["ioredis", "convict"]);
    // Both are CommonJS: imported, Node 20 takes every file they require through its ES module
    // loader, which costs inspect more than everything else it loads (src/redis/ioredis.ts).
    expect(result.imported).toEqual([]);
  });

  it("status loads convict and nothing else: it asks the janitor over HTTP, never Redis", async () => {
    const config = join(dir, "status.json");
    // Nobody listens on port 1: the command fails (exit 1) after loading what it needs. --url
    // names the janitor: without it, a janitor that does not answer makes the command sample
    // Redis itself (and load its client), which is another case.
    await writeFile(config, JSON.stringify({ http: { host: "127.0.0.1", port: 1 } }));
    const result = await packagesLoadedBy([
      "status",
      "--config",
      config,
      "--url",
      "http://127.0.0.1:1",
    ]);
    expect(result.code).toBe(1);
    expect(result.packages).toEqual(["convict"]);
  });

  it("a YAML file loads yaml", async () => {
    const config = join(dir, "offline.yaml");
    await writeFile(config, "log:\n  level: warn\n");
    const result = await packagesLoadedBy(["check-config", "--offline", "--config", config]);
    expect(result.code).toBe(0);
    expect(result.packages).toContain("yaml");
    expect(result.packages).not.toContain("prom-client");
    expect(result.packages).not.toContain("redlock");
  });
});
