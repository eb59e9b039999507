// The compose Prometheus configuration shows the http.auth settings as commented blocks:
// uncommented, each must be a configuration promtool accepts.
import { execFile, type ExecFileException } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { repoRoot } from "./kustomize.js";

const PROMETHEUS_YML = join(repoRoot, "deploy/compose/prometheus/prometheus.yml");
const PROMTOOL = process.env.PROMTOOL ?? "promtool";

/** The file with the commented block starting at `# <key>:` uncommented. */
function uncommented(text: string, key: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`    # ${key}:`));
  if (start < 0) throw new Error(`prometheus.yml: no commented ${key} block`);
  for (let i = start; i < lines.length && /^ {4}# {0,3}\S/u.test(lines[i] ?? ""); i += 1) {
    if (i > start && !(lines[i] ?? "").startsWith("    #   ")) break;
    lines[i] = `    ${(lines[i] ?? "").slice("    # ".length)}`;
  }
  return lines.join("\n");
}

describe("deploy/compose/prometheus/prometheus.yml: the http.auth examples", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sj-compose-auth-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each([
    ["authorization", "credentials_file"],
    ["basic_auth", "password_file"],
  ])("%s, uncommented, passes promtool check config", async (key, fileKey) => {
    const text = uncommented(await readFile(PROMETHEUS_YML, "utf8"), key);
    const config = parse(text) as {
      rule_files?: string[];
      scrape_configs: Record<string, Record<string, string>>[];
    };
    const scrape = config.scrape_configs[0]?.[key];
    expect(scrape?.[fileKey]).toMatch(/^\/etc\/prometheus\/secrets\//u);
    // The secret file where this scratch root has it; the rules are checked elsewhere.
    const secret = join(dir, `${key}-secret`);
    await writeFile(secret, "s3cret\n");
    if (scrape !== undefined) scrape[fileKey] = secret;
    delete config.rule_files;
    const path = join(dir, `${key}.yml`);
    await writeFile(path, stringify(config));
    try {
      const result = await promisify(execFile)(PROMTOOL, ["check", "config", path]);
      expect(`${result.stdout}${result.stderr}`).toContain("SUCCESS");
    } catch (error) {
      const failure = error as ExecFileException;
      expect.fail(`promtool check config: ${failure.stdout ?? ""}${failure.stderr ?? ""}`);
    }
  });
});
