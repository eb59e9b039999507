import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { missingRedisServer } from "./support/requireTools.js";

/**
 * Process-level tests run the real CLI from dist/, so build it once before the suite: a stale
 * dist/ would test yesterday's code. Every test file starts its own redis-server: without one on
 * PATH, say so in one line and stop before anything starts (or leaves temporary folders behind).
 */
export default async function setup(): Promise<void> {
  const missing = missingRedisServer(process.env.PATH);
  if (missing !== undefined) {
    process.stderr.write(`\n${missing}\n\n`);
    process.exit(1);
  }
  const root = new URL("..", import.meta.url).pathname;
  await promisify(execFile)("npm", ["run", "--silent", "build"], { cwd: root, timeout: 180_000 });
}
