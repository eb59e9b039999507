import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { ConfigError } from "../../src/config/ConfigError.js";
import { loadConfig } from "../../src/config/loadConfig.js";
import { validateConfig } from "../../src/config/validateConfig.js";
import type { JanitorConfig, RedisConfig } from "../../src/core/configTypes.js";

/** A scratch directory for configuration and password files, removed by `remove()`. */
export interface TempDir {
  readonly path: string;
  /** Writes `content` to `name` inside the directory and returns the file's path. */
  write(name: string, content: string): Promise<string>;
  remove(): Promise<void>;
}

export async function makeTempDir(): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), "stream-janitor-config-"));
  return {
    path,
    async write(name, content) {
      const file = join(path, name);
      await writeFile(file, content, "utf8");
      return file;
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}

export interface ExpectedConfigError {
  key: string;
  value: unknown;
  expected: string;
}

/** Asserts that `promise` rejects with a ConfigError carrying exactly these fields. */
export async function expectConfigError(
  promise: Promise<unknown>,
  want: ExpectedConfigError,
): Promise<ConfigError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ConfigError);
  const configError = error as ConfigError;
  expect(configError.exitCode).toBe(78);
  expect({
    key: configError.key,
    value: configError.value,
    expected: configError.expected,
  }).toEqual(want);
  expect(configError.message).toContain(`invalid configuration: ${want.key}`);
  expect(configError.message).toContain(`: expected ${want.expected}`);
  return configError;
}

/** Writes `content` as a JSON (object) or YAML (string) file in `dir` and loads it. */
export async function loadContent(
  dir: TempDir,
  content: object | string,
  env: NodeJS.ProcessEnv = {},
): Promise<JanitorConfig> {
  const yaml = typeof content === "string";
  const name = `${randomUUID()}.${yaml ? "yaml" : "json"}`;
  const configPath = await dir.write(name, yaml ? content : JSON.stringify(content));
  return loadConfig({ configPath, env });
}

/**
 * validateConfig as a promise, for expectConfigError: validation alone, no file written (`content`
 * is what a JSON file would hold).
 */
export function validated(content: object, env: NodeJS.ProcessEnv = {}): Promise<JanitorConfig> {
  // A throw inside the executor rejects the promise.
  return new Promise((resolve) => {
    resolve(validateConfig(content as Readonly<Record<string, unknown>>, env));
  });
}

/** YAML text goes through a file (its parsing is part of the test); an object is validated. */
export function loadOrValidate(
  dir: TempDir,
  content: object | string,
  env: NodeJS.ProcessEnv = {},
): Promise<JanitorConfig> {
  return typeof content === "string" ? loadContent(dir, content, env) : validated(content, env);
}

/** The top-level sections, in schema order. */
export const SECTIONS =
  "redis, http, log, lease, sweep, metrics, groups, discover, discovery, status, events, retention";

export const DURATION =
  "an integer number of milliseconds between 1 and 2147483647, or the same with a unit (500ms, 30s, 5m, 2h, 7d)";
export const GROUP = { stream: "orders", group: "billing" };

/** A configuration with one group, orders/billing, with `overrides` applied. */
export const withGroup = (overrides: object) => ({ groups: [{ ...GROUP, ...overrides }] });

/**
 * redis.* as contract section 3 gives it, with `url`: restated here on purpose, as the expected
 * value of the loading tests, independent of the schema they test (the product's own is
 * plainRedisConfig in src/config/defaultConfig.ts, derived from the schema).
 */
export function plainRedisConfig(url: string): RedisConfig {
  return {
    mode: "standalone",
    url,
    nodes: [],
    masterName: "",
    username: "",
    password: "",
    passwordFile: "",
    sentinelPassword: "",
    sentinelPasswordFile: "",
    tls: { caFile: "", certFile: "", keyFile: "", serverName: "" },
  };
}
