import { execFile } from "node:child_process";
import { promisify } from "node:util";

/**
 * Process-level tests run the real CLI from dist/, so build it once before the suite: a stale
 * dist/ would test yesterday's code.
 */
export default async function setup(): Promise<void> {
  const root = new URL("..", import.meta.url).pathname;
  await promisify(execFile)("npm", ["run", "--silent", "build"], { cwd: root, timeout: 180_000 });
}
