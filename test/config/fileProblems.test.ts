import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/loadConfig.js";
import { runCli } from "../support/daemonProcess.js";
import {
  SECTIONS,
  expectConfigError,
  makeTempDir,
  plainRedisConfig,
  type TempDir,
} from "./configFiles.js";

/** "Billion laughs": each level refers to the one above nine times (9^7 leaves if expanded). */
const ALIAS_BOMB = [
  'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
  ..."bcdefg".split("").map((name, level) => {
    const above = "abcdefg"[level] ?? "a";
    return `${name}: &${name} [${Array.from({ length: 9 }, () => `*${above}`).join(", ")}]`;
  }),
].join("\n");

const DEFAULT_URL = "redis://127.0.0.1:6379";
const GROUP_A = { stream: "a", group: "g" };

describe("loadConfig: password files and configuration files", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  describe("passwordFile", () => {
    it("strips one trailing newline and wins over password", async () => {
      const passwordFile = await dir.write("password", "s3cret\n");
      const configPath = await dir.write(
        "with-password-file.json",
        JSON.stringify({ redis: { password: "ignored", passwordFile } }),
      );
      const config = await loadConfig({ configPath, env: {} });
      expect(config.redis).toEqual({
        ...plainRedisConfig(DEFAULT_URL),
        password: "s3cret",
        passwordFile,
      });
    });

    it("strips a CRLF, and only one newline", async () => {
      const crlf = await dir.write("password-crlf", "s3cret\r\n");
      const env = { STREAM_JANITOR_REDIS_PASSWORD_FILE: crlf };
      expect((await loadConfig({ env })).redis.password).toBe("s3cret");
      const twice = await dir.write("password-twice", "s3cret\n\n");
      env.STREAM_JANITOR_REDIS_PASSWORD_FILE = twice;
      expect((await loadConfig({ env })).redis.password).toBe("s3cret\n");
    });

    it("fails with a ConfigError naming redis.passwordFile when unreadable", async () => {
      const missing = `${dir.path}/no-such-password`;
      await expectConfigError(
        loadConfig({ env: { STREAM_JANITOR_REDIS_PASSWORD_FILE: missing } }),
        {
          key: "redis.passwordFile",
          value: missing,
          expected: "a readable file holding the Redis password (ENOENT)",
        },
      );
    });
  });

  describe("file problems", () => {
    it("names a missing file given by --config", async () => {
      const configPath = `${dir.path}/missing.yaml`;
      await expectConfigError(loadConfig({ configPath, env: {} }), {
        key: configPath,
        value: undefined,
        expected: "a readable configuration file (ENOENT)",
      });
    });

    it("names a missing file given by STREAM_JANITOR_CONFIG", async () => {
      const path = `${dir.path}/missing.json`;
      await expectConfigError(loadConfig({ env: { STREAM_JANITOR_CONFIG: path } }), {
        key: path,
        value: undefined,
        expected: "a readable configuration file (ENOENT) (named by STREAM_JANITOR_CONFIG)",
      });
    });

    it("names a file with a YAML syntax error and where it is", async () => {
      const configPath = await dir.write("broken.yaml", "http:\n  port: 1\n  port: 2\n");
      await expectConfigError(loadConfig({ configPath, env: {} }), {
        key: configPath,
        value: undefined,
        expected: "valid YAML: Map keys must be unique at line 3, column 3",
      });
    });

    it("names a file with a JSON syntax error without quoting its content", async () => {
      const configPath = await dir.write("broken.json", '{"redis": {"password": hunter2}}');
      const error = await expectConfigError(loadConfig({ configPath, env: {} }), {
        key: configPath,
        value: undefined,
        expected: "valid JSON: syntax error",
      });
      expect(error.message).not.toContain("hunter2");
      const positioned = await dir.write("trailing-comma.json", '{\n  "log": {},\n}');
      await expectConfigError(loadConfig({ configPath: positioned, env: {} }), {
        key: positioned,
        value: undefined,
        expected: "valid JSON: syntax error at line 3, column 1",
      });
    });

    it("refuses a YAML alias bomb with exit 78 and one clear line, no stack trace", async () => {
      const configPath = await dir.write("laughs.yaml", `${ALIAS_BOMB}\n`);
      await expectConfigError(loadConfig({ configPath, env: {} }), {
        key: configPath,
        value: undefined,
        expected:
          'valid YAML: its aliases expand too much (more than 100 uses of an anchor, as in a "billion laughs" file); write the values out instead of aliasing them',
      });
      const result = await runCli(["check-config", "--config", configPath]);
      expect(result.code).toBe(78);
      expect(result.stderr).toContain("its aliases expand too much");
      expect(result.stderr).not.toMatch(/\n\s+at /u);
    });

    it("refuses a JSON file that gives a key twice, naming the key and both lines", async () => {
      const configPath = await dir.write(
        "twice.json",
        '{\n  "http": {\n    "port": 9478,\n    "host": "127.0.0.1",\n    "port": 9479\n  }\n}\n',
      );
      await expectConfigError(loadConfig({ configPath, env: {} }), {
        key: configPath,
        value: undefined,
        expected: "valid JSON: http.port is given twice (lines 3 and 5); give each key once",
      });
      // Inside a list, and spelt with an escape: JSON.parse would keep the last one silently.
      const inGroups = await dir.write(
        "twice-in-groups.json",
        '{"groups": [{"stream": "a", "group": "g"}, {"stream": "b", "group": "g", "gr\\u006fup": "h"}]}',
      );
      await expectConfigError(loadConfig({ configPath: inGroups, env: {} }), {
        key: inGroups,
        value: undefined,
        expected: "valid JSON: groups[1].group is given twice (lines 1 and 1); give each key once",
      });
      const result = await runCli(["check-config", "--config", configPath]);
      expect(result.code).toBe(78);
      expect(result.stderr).toContain("http.port is given twice");
      // The same key in two different mappings is no duplicate.
      const fine = await dir.write(
        "same-key-twice.json",
        JSON.stringify({ groups: [GROUP_A, { ...GROUP_A, stream: "b" }] }),
      );
      await expect(loadConfig({ configPath: fine, env: {} })).resolves.toMatchObject({
        groups: [GROUP_A, { stream: "b" }],
      });
    });

    it("reads a file of 300 listed groups (over the old 64 KiB), and refuses one over 4 MiB", async () => {
      const groups = Array.from({ length: 300 }, (_, index) => ({
        stream: `tenant-${String(index).padStart(4, "0")}:orders:events`,
        group: `billing-service-${index}`,
        minIdleMs: 60000,
        maxDeliveries: 5,
        action: "requeue",
        requeueStream: "",
        deadLetterStream: `{tenant-${String(index).padStart(4, "0")}:orders:events}:dead`,
        deadLetterMaxLen: 100000,
      }));
      const yaml = `groups:\n${groups
        .map((group) =>
          Object.entries(group)
            .map(
              ([key, value], at) => `${at === 0 ? "  - " : "    "}${key}: ${JSON.stringify(value)}`,
            )
            .join("\n"),
        )
        .join("\n")}\n`;
      expect(Buffer.byteLength(yaml)).toBeGreaterThan(64 * 1024);
      const configPath = await dir.write("300-groups.yaml", yaml);
      const config = await loadConfig({ configPath, env: {} });
      expect(config.groups).toHaveLength(300);

      const huge = await dir.write("huge.yaml", `# ${"x".repeat(4 * 1024 * 1024)}\n`);
      await expectConfigError(loadConfig({ configPath: huge, env: {} }), {
        key: huge,
        value: undefined,
        expected: `a file of at most 4 MiB (found ${4 * 1024 * 1024 + 3} bytes)`,
      });
    });

    it("rejects an extension that is neither YAML nor JSON", async () => {
      const configPath = await dir.write("janitor.toml", "[redis]\n");
      await expectConfigError(loadConfig({ configPath, env: {} }), {
        key: configPath,
        value: undefined,
        expected: "a file ending in .yaml, .yml or .json",
      });
    });

    it("rejects a file whose top level is not a mapping", async () => {
      const configPath = await dir.write("list.yaml", "- redis\n- http\n");
      await expectConfigError(loadConfig({ configPath, env: {} }), {
        key: configPath,
        value: undefined,
        expected: `a mapping of sections (${SECTIONS}) at the top level`,
      });
    });
  });
});
