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
