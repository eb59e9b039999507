import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * A module resolve hook that appends every URL the process resolves to the file named by
 * SJ_RESOLVED_LOG: what a CLI start-up loads, for the lazy-loading tests.
 */
const HOOKS = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.SJ_RESOLVED_LOG, result.url + "\\n");
  return result;
}
`;

/** Writes the hook and its `--import` register file into `dir`; returns the register path. */
export async function writeResolveHooks(dir: string): Promise<string> {
  const hooks = join(dir, "hooks.mjs");
  const register = join(dir, "register.mjs");
  await writeFile(hooks, HOOKS);
  await writeFile(
    register,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  return register;
}
