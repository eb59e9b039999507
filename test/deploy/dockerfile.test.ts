// The container image, checked statically (no container engine on the build machines): what the
// final stage runs as, how it starts, what it is labelled with and what the build context holds.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  inBuildContext,
  keyValues,
  parseDockerfile,
  type Dockerfile,
  type Stage,
} from "./dockerfile.js";
import { repoRoot } from "./kustomize.js";

let dockerfile: Dockerfile;
let finalStage: Stage;
let ignoreLines: string[];
let pkg: { version: string; license: string; repository: { url: string } };

function instructions(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

/** ${NAME} expanded from the stage's ARG defaults. */
function expand(stage: Stage, value: string): string {
  const args = new Map<string, string>();
  for (const arg of instructions(stage, "ARG")) {
    const [key = "", defaultValue = ""] = arg.split("=", 2);
    args.set(key, defaultValue);
  }
  return value.replace(/\$\{(\w+)\}/gu, (_, name: string) => args.get(name) ?? `\${${name}}`);
}

beforeAll(async () => {
  dockerfile = parseDockerfile(await readFile(join(repoRoot, "Dockerfile"), "utf8"));
  const last = dockerfile.stages[dockerfile.stages.length - 1];
  if (last === undefined) throw new Error("Dockerfile: no stage");
  finalStage = last;
  ignoreLines = (await readFile(join(repoRoot, ".dockerignore"), "utf8")).split("\n");
  pkg = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as typeof pkg;
});

describe("Dockerfile", () => {
  it("builds on a Node.js LTS line chosen by a build argument, never `latest`", () => {
    expect(["22", "24", "26"]).toContain(dockerfile.globalArgs.get("NODE_VERSION"));
    for (const stage of dockerfile.stages) {
      if (dockerfile.stages.some((other) => other.name === stage.from)) continue; // FROM build
      expect(stage.from).toBe("node:${NODE_VERSION}-bookworm-slim");
    }
  });

  it("ships the Node.js major that .ci/run tests, and package.json engines accept it", async () => {
    const major = dockerfile.globalArgs.get("NODE_VERSION") ?? "";
    const ci = await readFile(join(repoRoot, ".ci/run"), "utf8");
    expect(ci).toContain("sed -n 's/^ARG NODE_VERSION=//p' Dockerfile");
    const { engines } = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    const lines = engines.node
      .split("||")
      .map((range) => /^\s*\^(\d+)\.(\d+)\.\d+\s*$/u.exec(range));
    expect(lines.every((line) => line !== null)).toBe(true);
    const majors = lines.map((line) => line?.[1]);
    expect(majors).toContain(major);
    // The machine running this suite is a supported line too.
    const [nodeMajor = "", nodeMinor = ""] = process.versions.node.split(".");
    const own = lines.find((line) => line?.[1] === nodeMajor);
    expect(own, `Node.js ${process.versions.node} outside engines ${engines.node}`).toBeDefined();
    expect(Number(nodeMinor)).toBeGreaterThanOrEqual(Number(own?.[2]));
  });

  it("runs the final stage as the numeric user 1000:1000", () => {
    const users = instructions(finalStage, "USER");
    expect(users[users.length - 1]).toBe("1000:1000");
  });

  it("starts Node in exec form, source maps on and the heap capped through NODE_OPTIONS", () => {
    const [entrypoint, ...more] = instructions(finalStage, "ENTRYPOINT");
    expect(more).toEqual([]);
    expect(JSON.parse(entrypoint ?? "null")).toEqual(["node", "/app/dist/cli.js"]);
    expect(JSON.parse(instructions(finalStage, "CMD")[0] ?? "null")).toEqual(["run"]);
    const env = new Map(instructions(finalStage, "ENV").flatMap((args) => [...keyValues(args)]));
    expect(env.get("NODE_OPTIONS")).toBe("--enable-source-maps --max-old-space-size=160");
  });

  it("carries OCI labels with the package's version, source and license", () => {
    const labels = new Map(
      instructions(finalStage, "LABEL").flatMap((args) => [...keyValues(expand(finalStage, args))]),
    );
    expect(labels.get("org.opencontainers.image.version")).toBe(pkg.version);
    expect(labels.get("org.opencontainers.image.licenses")).toBe(pkg.license);
    expect(pkg.repository.url).toContain(labels.get("org.opencontainers.image.source"));
  });

  it("ships the product only: the final stage copies a dist/ without the demo", () => {
    const sources = instructions(finalStage, "COPY").map((args) => {
      const from = /--from=(\S+)/u.exec(args)?.[1];
      return { from, paths: args.replace(/--\S+/gu, "").trim().split(/\s+/u).slice(0, -1) };
    });
    expect(sources.every((copy) => copy.from !== undefined)).toBe(true);
    for (const copy of sources.filter((c) => c.paths.some((p) => p.includes("dist")))) {
      const stage = dockerfile.stages.find((s) => s.name === copy.from);
      expect(stage, `stage ${String(copy.from)}`).toBeDefined();
      expect(instructions(stage as Stage, "RUN").join("\n")).toMatch(/rm -rf dist\/demo\b/u);
    }
    expect(instructions(finalStage, "COPY").join("\n")).not.toMatch(/\btest\b|src\//u);
  });

  it("ships the LICENSE next to package.json", () => {
    const copies = instructions(finalStage, "COPY").map((args) => args.split(/\s+/u));
    expect(copies.some((words) => words.includes("/app/LICENSE"))).toBe(true);
  });

  it("gets a build context with the build's inputs and nothing else", () => {
    const copied = dockerfile.stages
      .flatMap((stage) => instructions(stage, "COPY"))
      .filter((args) => !args.includes("--from="))
      .flatMap((args) => args.split(/\s+/u).slice(0, -1));
    expect(copied.length).toBeGreaterThan(0);
    for (const path of copied) {
      expect(inBuildContext(ignoreLines, path.replace(/\/$/u, "")), path).toBe(true);
    }
    for (const path of [
      "node_modules",
      "node_modules/ioredis/package.json",
      "dist/cli.js",
      "test/deploy/x.ts",
      ".git/HEAD",
      "coverage",
      "deploy/kubernetes/base/config.yaml",
    ]) {
      expect(inBuildContext(ignoreLines, path), path).toBe(false);
    }
    expect(inBuildContext(ignoreLines, "src/cli.ts")).toBe(true);
  });
});

describe("inBuildContext", () => {
  it("lets the last matching pattern decide, for a path or its directories", () => {
    expect(inBuildContext(["node_modules"], "node_modules/a/b.js")).toBe(false);
    expect(inBuildContext(["*", "!src/"], "src/a/b.ts")).toBe(true);
    expect(inBuildContext(["*", "!src/", "src/**/*.test.ts"], "src/a/b.test.ts")).toBe(false);
    expect(inBuildContext([], "anything")).toBe(true);
  });
});
