// What `npm pack` (and so `npm publish`) ships: the product, its license and the operator files;
// never the demo, the tests or the sources.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./kustomize.js";

interface PackResult {
  files: { path: string }[];
}

async function packedFiles(): Promise<string[]> {
  // --ignore-scripts: the suite's global setup has built dist/ already.
  const { stdout } = await promisify(execFile)(
    "npm",
    ["pack", "--dry-run", "--json", "--ignore-scripts"],
    { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 },
  );
  const [result] = JSON.parse(stdout) as PackResult[];
  return (result?.files ?? []).map((file) => file.path).sort();
}

describe("npm package", () => {
  it("ships dist/ without the demo, the license, the alert rules, runbook, dashboard and ACL", async () => {
    const files = await packedFiles();
    const pkg = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    for (const bin of Object.values(pkg.bin)) expect(files).toContain(bin.replace(/^\.\//u, ""));
    expect(files).toEqual(
      expect.arrayContaining([
        "LICENSE",
        "README.md",
        "package.json",
        "dist/scripts/lua/sweepPage.lua",
        "deploy/prometheus/stream-janitor.rules.yml",
        "deploy/prometheus/runbook.md",
        "deploy/grafana/stream-janitor.json",
        "deploy/redis/stream-janitor.acl",
      ]),
    );
    const unexpected = files.filter(
      (file) =>
        !(
          (file.startsWith("dist/") && !file.startsWith("dist/demo/")) ||
          file.startsWith("deploy/prometheus/") ||
          file.startsWith("deploy/grafana/") ||
          file === "deploy/redis/stream-janitor.acl" ||
          ["LICENSE", "README.md", "package.json"].includes(file)
        ),
    );
    expect(unexpected).toEqual([]);
    expect(files.filter((file) => /(^|\/)(demo|test|support)\//u.test(file))).toEqual([]);
  });

  it("has the MIT license text that package.json declares, and says where it lives", async () => {
    const pkg = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as {
      license: string;
      repository?: { type: string; url: string };
      homepage?: string;
    };
    expect(pkg.license).toBe("MIT");
    const license = await readFile(join(repoRoot, "LICENSE"), "utf8");
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /u);
    expect(license).toContain("Permission is hereby granted, free of charge");
    expect(pkg.repository?.type).toBe("git");
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\//u);
    expect(pkg.homepage).toMatch(/^https:\/\//u);
  });
});
