import { afterAll } from "vitest";
import { writeConfigFile } from "./daemonProcess.js";

/**
 * Configuration files for the tests of one file, each in a temporary folder removed after the
 * file's tests: `const configPath = useConfigFiles();` then `await configPath(config)`.
 */
export function useConfigFiles(): (config: unknown) => Promise<string> {
  const removals: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(removals.splice(0).map((remove) => remove()));
  });
  return async (config) => {
    const file = await writeConfigFile(config);
    removals.push(file.remove);
    return file.path;
  };
}
