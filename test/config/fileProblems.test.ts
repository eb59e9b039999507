import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/loadConfig.js";
import { SECTIONS, expectConfigError, makeTempDir, type TempDir } from "./configFiles.js";

const DEFAULT_URL = "redis://127.0.0.1:6379";

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
        url: DEFAULT_URL,
        password: "s3cret",
        passwordFile,
        mode: "standalone",
        nodes: [],
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
