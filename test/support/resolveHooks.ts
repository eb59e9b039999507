import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * A module resolve hook that appends every URL the process resolves to the file named by
 * SJ_RESOLVED_LOG: what a CLI start-up loads, for the lazy-loading tests. A module the ESM
 * loader resolves (an `import`) is logged as its URL; a file `require()` resolves (a CommonJS
 * package loaded with createRequire, or a file such a package requires) as "require " and its
 * URL, so that a test sees both and can tell them apart.
 */
const HOOKS = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.SJ_RESOLVED_LOG, result.url + "\\n");
  return result;
}
`;

/** Module._resolveFilename serves require() and createRequire(): patched in the main thread. */
const REQUIRE_HOOK = `import { appendFileSync } from "node:fs";
import { Module } from "node:module";
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const path = resolveFilename.apply(this, args);
  if (isAbsolute(path)) {
    appendFileSync(process.env.SJ_RESOLVED_LOG, "require " + pathToFileURL(path).href + "\\n");
  }
  return path;
};
`;

/** Writes the hooks and their `--import` register file into `dir`; returns the register path. */
export async function writeResolveHooks(dir: string): Promise<string> {
  const hooks = join(dir, "hooks.mjs");
  const register = join(dir, "register.mjs");
  await writeFile(hooks, HOOKS);
  await writeFile(
    register,
    `${REQUIRE_HOOK}import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  return register;
}
