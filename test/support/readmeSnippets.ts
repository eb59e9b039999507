import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The first code block of `language` in README.md after the line that contains `after`: the
 * README's own code, as users copy it.
 */
export async function readmeSnippet(language: string, after: string): Promise<string> {
  const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
  const from = readme.indexOf(after);
  const open = readme.indexOf("```" + language + "\n", from);
  const close = readme.indexOf("\n```", open);
  if (from < 0 || open < 0 || close < 0) throw new Error(`no ${language} block after ${after}`);
  return readme.slice(open + language.length + 4, close + 1);
}

/** A command to run a file holding a program in a temporary folder (that can import ioredis). */
export interface Program {
  dir: string;
  command: string;
  args: string[];
  remove(): Promise<void>;
}

export async function writeProgram(
  fileName: string,
  source: string,
  command: string,
): Promise<Program> {
  const dir = await mkdtemp(join(tmpdir(), "sj-readme-"));
  // The project's node_modules, so that `import ... from "ioredis"` resolves from the folder.
  const modules = await realpath(new URL("../../node_modules", import.meta.url).pathname);
  await symlink(modules, join(dir, "node_modules"));
  const path = join(dir, fileName);
  await writeFile(path, source);
  return {
    dir,
    command,
    args: [path],
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * Consumers run as child processes, each restarted whenever it exits (as a deployment would),
 * at most `maxStarts` starts in all. stop() kills them (only the processes started here).
 */
export class ConsumerFleet {
  starts = 0;
  stderr = "";
  private readonly children = new Map<string, ChildProcess>();
  private stopping = false;

  constructor(
    private readonly program: Program,
    private readonly env: Record<string, string>,
    private readonly maxStarts: number,
  ) {}

  start(consumer: string): void {
    if (this.stopping || this.starts >= this.maxStarts) return;
    this.starts += 1;
    const child = spawn(this.program.command, this.program.args, {
      cwd: this.program.dir,
      env: { ...process.env, ...this.env, CONSUMER: consumer },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      if (this.stderr.length < 20_000) this.stderr += chunk.toString();
    });
    this.children.set(consumer, child);
    child.on("exit", () => {
      this.start(consumer);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const child of this.children.values()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
  }
}
