import { execFile } from "node:child_process";
import { mkdtemp, readFile, realpath, symlink, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChaosGroup } from "./groups.js";
import { jsPrelude } from "./jsPrelude.js";
import { pyPrelude } from "./pyPrelude.js";
import { PROJECT_ROOT } from "./root.js";

/** A consumer program in a temporary folder that can import ioredis. */
export interface Program {
  dir: string;
  command: string;
  args: string[];
  remove(): Promise<void>;
}

export type Language = "js" | "python";

/** Debian's python3 with its python3-redis (never a python3 that comes first on PATH). */
const PYTHON = "/usr/bin/python3";

/** Whether the README's redis-py loop can run here (.ci/run installs python3-redis). */
export function pythonAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(PYTHON, ["-c", "import redis"], (error) => resolve(error === null));
  });
}

/**
 * The first code block of `language` in README.md after the line holding `after` (as
 * test/support's readmeSnippet reads it, from the project root wherever this file was compiled to).
 */
async function readmeLoop(language: string, after: string): Promise<string> {
  const readme = await readFile(join(PROJECT_ROOT, "README.md"), "utf8");
  const fence = "```" + language + "\n";
  const open = readme.indexOf(fence, readme.indexOf(after));
  const close = readme.indexOf("\n```", open);
  if (readme.indexOf(after) < 0 || open < 0 || close < 0)
    throw new Error(`no ${language} block after ${after}`);
  return readme.slice(open + fence.length, close + 1);
}

/**
 * How each loop makes its one client, and what a consumer on Redis Cluster makes instead: the
 * README shows no Cluster consumer, so there the same loop runs with the client's own Cluster
 * class (ioredis's Cluster, redis-py's RedisCluster), seeded with every node (the preludes'
 * chaosClient). Nothing else in the loop changes.
 */
const CLIENT_LINE: Record<Language, [string, string]> = {
  js: ["new Redis(process.env.REDIS_URL, { protocol: 2 })", "chaosClient()"],
  python: ['redis.Redis.from_url(os.environ["REDIS_URL"])', "chaos_client()"],
};

/**
 * The README loop for `group`, with its stream and group names, after the prelude; on Redis
 * Cluster (`cluster`), with the cluster client of CLIENT_LINE.
 */
export async function consumerProgram(
  group: ChaosGroup,
  language: Language,
  cluster = false,
): Promise<Program> {
  const written = await readmeLoop(language, group.loopAfter);
  const [client, clusterClient] = CLIENT_LINE[language];
  if (cluster && !written.includes(client)) {
    throw new Error(`the README's ${language} loop after ${group.loopAfter} has no ${client}`);
  }
  const loop = (cluster ? written.replace(client, clusterClient) : written)
    .replaceAll("orders", group.stream)
    .replaceAll("billing", group.group);
  const dir = await mkdtemp(join(tmpdir(), "sj-chaos-consumer-"));
  await symlink(await realpath(join(PROJECT_ROOT, "node_modules")), join(dir, "node_modules"));
  const remove = () => rm(dir, { recursive: true, force: true });
  if (language === "python") {
    const path = join(dir, "consumer.py");
    await writeFile(path, pyPrelude(group) + loop);
    return { dir, command: PYTHON, args: [path], remove };
  }
  const path = join(dir, "consumer.mjs");
  await writeFile(path, jsPrelude(group) + loop);
  return { dir, command: process.execPath, args: [path], remove };
}
