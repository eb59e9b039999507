import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project's root folder: the nearest folder above this file whose package.json is
 * stream-janitor's. The harness runs from test/chaos (vitest) and from its tsc build
 * (test/chaos/build/test/chaos, `npm run chaos`), so no fixed relative path fits both.
 */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const name = (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name;
      if (name === "stream-janitor") return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("chaos: the stream-janitor project root was not found");
    dir = parent;
  }
}

export const PROJECT_ROOT = findRoot();
