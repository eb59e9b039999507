import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** True when an executable called `name` is on `path` (a PATH value). */
export function onPath(name: string, path: string | undefined): boolean {
  return (path ?? "").split(delimiter).some((dir) => {
    if (dir === "") return false;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The one line `npm test` prints when redis-server is missing, instead of one
 * `spawn redis-server ENOENT` per test file (and their temporary folders); undefined when found.
 */
export function missingRedisServer(path: string | undefined): string | undefined {
  if (onPath("redis-server", path)) return undefined;
  return "npm test needs redis-server (>= 7.0) on PATH: install it, e.g. `apt-get install redis-server` on Debian/Ubuntu or `brew install redis` on macOS";
}

/**
 * Why Debian's python3-redis cannot run the README's redis-py loop here, or undefined when it
 * can: /usr/bin/python3 (not a pyenv python3 on PATH) must import redis. `.ci/run` installs it.
 */
export async function pythonRedisProblem(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile("/usr/bin/python3", ["-c", "import redis"], (error) => {
      resolve(
        error === null
          ? undefined
          : "the README's redis-py loop needs Debian's python3-redis: apt-get install python3-redis",
      );
    });
  });
}
