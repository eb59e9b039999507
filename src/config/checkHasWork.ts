import { ConfigError } from "./ConfigError.js";

/** The sections that give `run` and `sweep` something to do (README "Running it"). */
const WORK_SECTIONS = ["groups", "discover", "retention"] as const;

/**
 * `run` and `sweep` refuse a configuration with nothing to do: most often a wrong path or an
 * empty file, which would otherwise run happily and look after nothing. check-config accepts it.
 * Sections are looked up by name, so `discover` and `retention` count as soon as they exist.
 */
export function checkHasWork(config: object): void {
  const sections = config as Record<string, unknown>;
  const hasWork = WORK_SECTIONS.some((name) => {
    const value = sections[name];
    return Array.isArray(value) && value.length > 0;
  });
  if (!hasWork) {
    throw new ConfigError(
      "groups",
      [],
      "at least one entry in groups, discover or retention: with none the janitor has nothing to do",
    );
  }
}
