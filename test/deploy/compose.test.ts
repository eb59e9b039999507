// The compose quickstart, checked without a container engine: the file parses, everything it
// mounts or builds exists, Prometheus accepts its configuration with the rules mounted where the
// container sees them, Grafana's provisioning points at the dashboard, and the janitor's settings
// are the demo's. Then the stack's two halves, the janitor (with the compose configuration) and
// the demo's actors (`--janitor-url`), run as processes against a test Redis.
import { execFile, spawn, type ExecFileException } from "node:child_process";
import { once } from "node:events";
import { access, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { demoConfig } from "../../src/demo/demoConfig.js";
import { DaemonProcess, runCli } from "../support/daemonProcess.js";
import { useRedisServer } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import { parseDockerfile } from "./dockerfile.js";
import { repoRoot } from "./kustomize.js";

const COMPOSE_DIR = join(repoRoot, "deploy/compose");
const PROMTOOL = process.env.PROMTOOL ?? "promtool";
const DEMO_ENTRY = join(repoRoot, "dist/demo/runDemo.js");

interface Service {
  image?: string;
  build?: { context: string; target?: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
}
interface Compose {
  services: Record<string, Service>;
}

let compose: Compose;

function service(name: string): Service {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`docker-compose.yml: no service ${name}`);
  return found;
}

/** host path (absolute) and container path of each bind mount of a service. */
function mounts(name: string): { host: string; container: string }[] {
  return (service(name).volumes ?? []).map((volume) => {
    const [host = "", container = ""] = volume.split(":");
    return { host: resolve(COMPOSE_DIR, host), container };
  });
}

async function readYamlFile(path: string): Promise<unknown> {
  return parse(await readFile(path, "utf8"));
}

beforeAll(async () => {
  compose = (await readYamlFile(join(COMPOSE_DIR, "docker-compose.yml"))) as Compose;
});

describe("deploy/compose/docker-compose.yml", () => {
  it("runs Redis, the janitor, the demo's actors, Prometheus and Grafana, images by version tag", () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      "demo",
      "grafana",
      "janitor",
      "prometheus",
      "redis",
    ]);
    for (const [name, { image }] of Object.entries(compose.services)) {
      expect(image, name).toMatch(/^[\w./-]+:v?\d[\w.-]*$/u);
    }
  });

  it("mounts and builds only files that exist", async () => {
    for (const name of Object.keys(compose.services)) {
      for (const { host } of mounts(name)) await access(host);
    }
    const dockerfile = parseDockerfile(await readFile(join(repoRoot, "Dockerfile"), "utf8"));
    for (const name of ["janitor", "demo"]) {
      const build = service(name).build;
      expect(resolve(COMPOSE_DIR, build?.context ?? "")).toBe(resolve(repoRoot));
      if (build?.target !== undefined) {
        expect(dockerfile.stages.map((stage) => stage.name)).toContain(build.target);
      }
    }
  });

  it("lets the demo's actors report on the janitor service, which runs the image's entrypoint", () => {
    expect(service("demo").command).toEqual([
      "--janitor-url",
      "http://janitor:9478",
      "--keep-running",
    ]);
    expect(service("demo").environment?.STREAM_JANITOR_REDIS_URL).toBe("redis://redis:6379");
    expect(service("janitor").command?.[0]).toBe("run");
  });

  it("gives the janitor the demo's settings, and they pass check-config", async () => {
    const file = join(COMPOSE_DIR, "janitor.yaml");
    const config = (await readYamlFile(file)) as {
      lease: unknown;
      sweep: unknown;
      metrics: Record<string, unknown>;
      groups: Record<string, unknown>[];
    };
    const demo = demoConfig("redis://redis:6379", 9478);
    expect(config.lease).toEqual(demo.lease);
    expect(config.sweep).toEqual(demo.sweep);
    expect(config.metrics.scrapeReadWaitMs).toBe(demo.metrics.scrapeReadWaitMs);
    expect(config.groups).toHaveLength(1);
    expect(demo.groups[0]).toMatchObject(config.groups[0] ?? {});
    // --offline: the file alone; its Redis is the compose service, not reachable from here.
    const result = await runCli(["check-config", "--offline", "--config", file]);
    expect(result.code, result.stderr).toBe(0);
  });

  it("has a Prometheus configuration that promtool accepts, with the alert rules loaded", async () => {
    // Lay the mounted files out under a scratch root as the container sees them.
    const root = await mkdtemp(join(tmpdir(), "sj-compose-"));
    try {
      let configPath = "";
      for (const { host, container } of mounts("prometheus")) {
        const target = join(root, container);
        await mkdir(dirname(target), { recursive: true });
        await copyFile(host, target);
        if (container === "/etc/prometheus/prometheus.yml") configPath = target;
      }
      expect(configPath).not.toBe("");
      const config = (await readYamlFile(configPath)) as {
        rule_files: string[];
        scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
      };
      expect(config.scrape_configs.map((s) => s.job_name)).toEqual(["stream-janitor"]);
      expect(config.scrape_configs[0]?.static_configs[0]?.targets).toEqual(["janitor:9478"]);
      config.rule_files = config.rule_files.map((pattern) => join(root, pattern));
      await writeFile(configPath, stringify(config));
      let output: string;
      try {
        const result = await promisify(execFile)(PROMTOOL, ["check", "config", configPath]);
        output = `${result.stdout}${result.stderr}`;
      } catch (error) {
        const failure = error as ExecFileException;
        expect.fail(`promtool check config: ${failure.stdout ?? ""}${failure.stderr ?? ""}`);
      }
      expect(output).toContain("stream-janitor.rules.yml");
      expect(output).toMatch(/SUCCESS: [1-9]\d* rules found/u);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("provisions Grafana with the Prometheus data source and the dashboard", async () => {
    const grafana = mounts("grafana");
    const byContainer = new Map(grafana.map((m) => [m.container, m.host]));
    const datasources = (await readYamlFile(
      byContainer.get("/etc/grafana/provisioning/datasources/prometheus.yml") ?? "",
    )) as { datasources: { type: string; url: string; isDefault: boolean }[] };
    expect(datasources.datasources).toEqual([
      expect.objectContaining({
        type: "prometheus",
        url: "http://prometheus:9090",
        isDefault: true,
      }),
    ]);
    const dashboards = (await readYamlFile(
      byContainer.get("/etc/grafana/provisioning/dashboards/stream-janitor.yml") ?? "",
    )) as { providers: { type: string; options: { path: string } }[] };
    const [provider] = dashboards.providers;
    expect(provider?.type).toBe("file");
    const dashboard = grafana.find((m) => m.container.startsWith(`${provider?.options.path}/`));
    expect(dashboard?.host).toBe(join(repoRoot, "deploy/grafana/stream-janitor.json"));
    const json = JSON.parse(await readFile(dashboard?.host ?? "", "utf8")) as { uid: string };
    expect(json.uid).toBe("stream-janitor");
  });
});

describe("README", () => {
  it("shows the compose stack as the third way to try it, and how to regenerate the PrometheusRule", async () => {
    const readme = await readFile(join(repoRoot, "README.md"), "utf8");
    const quickstart = readme.slice(readme.indexOf("## Quickstart"), readme.indexOf("## Running"));
    expect(quickstart).toMatch(
      /npm run demo[\s\S]*npm test[\s\S]*cd deploy\/compose && docker compose up/u,
    );
    expect(readme).toContain("npm run gen:prometheusrule");
  });
});

describe("the compose stack's janitor and demo actors, as processes", () => {
  const fixture = useRedisServer();
  let daemon: DaemonProcess | undefined;

  afterAll(async () => {
    await daemon?.kill();
  });

  it("play the demo's story: requeues, dead letters and ghosts, reported by the janitor's /metrics", async () => {
    const env = {
      STREAM_JANITOR_REDIS_URL: fixture.server.url,
      STREAM_JANITOR_HTTP_HOST: "127.0.0.1",
      STREAM_JANITOR_HTTP_PORT: "0",
    };
    const janitor = await DaemonProcess.start(join(COMPOSE_DIR, "janitor.yaml"), env);
    daemon = janitor;
    const demo = spawn(
      process.execPath,
      [DEMO_ENTRY, "--janitor-url", janitor.httpUrl, "--keep-running"],
      {
        env: { ...process.env, STREAM_JANITOR_REDIS_URL: fixture.server.url },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const closed = once(demo, "close") as Promise<[number | null]>;
    let output = "";
    demo.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    demo.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      // The janitor process does the work; its own /metrics tell when the story has played out.
      const counted = async (name: string) => ((await janitor.metric(name)) ?? 0) > 0;
      await waitFor(
        async () =>
          demo.exitCode !== null ||
          ((await counted("stream_janitor_requeued_entries_total")) &&
            (await counted("stream_janitor_dead_lettered_entries_total")) &&
            (await counted("stream_janitor_ghost_entries_total"))),
        { timeoutMs: 60_000, intervalMs: 200, what: "requeues, dead letters and ghosts" },
      );
    } finally {
      demo.kill("SIGTERM");
    }
    const [code] = await closed;
    expect(code, output).toBe(0);
    expect(output).toContain(`stream-janitor runs at ${janitor.httpUrl}`);
    const digest = output.slice(output.lastIndexOf("final digest"));
    expect(digest, output).toMatch(/requeued [1-9]/u);
    expect(digest, output).toMatch(/dead-lettered [1-9]/u);
    expect(digest, output).toMatch(/ghosts [1-9]/u);
    expect(output).toMatch(/stopped cleanly/u);
  });
});
