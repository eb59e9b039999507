import convict from "convict";
import { describe, expect, it } from "vitest";
import { ConfigError, configErrorFromConvict } from "../../src/config/ConfigError.js";
import { janitorSchema, type ConvictShape } from "../../src/config/configSchema.js";

function convictFailure(mutate: (config: convict.Config<ConvictShape>) => void): unknown {
  const config = convict<ConvictShape>(janitorSchema, { env: {}, args: [] });
  mutate(config);
  try {
    config.validate({ allowed: "strict" });
  } catch (error) {
    return error;
  }
  throw new Error("convict accepted the configuration");
}

describe("ConfigError", () => {
  it("names the key, the value and what was expected, with exit code 78", () => {
    const error = new ConfigError("lease.ttlMs", 0, "an integer >= 1");
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("ConfigError");
    expect(error.exitCode).toBe(78);
    expect(error.message).toBe("invalid configuration: lease.ttlMs = 0: expected an integer >= 1");
  });

  it("omits the value when there is none", () => {
    const error = new ConfigError("/etc/janitor.yaml", undefined, "valid YAML");
    expect(error.message).toBe("invalid configuration: /etc/janitor.yaml: expected valid YAML");
  });

  it("masks secrets and URL credentials but not the password file's path", () => {
    const password = new ConfigError("redis.password", "hunter2", "a string");
    expect(password.value).toBe("***");
    expect(password.message).not.toContain("hunter2");
    const url = new ConfigError("redis.url", "redis://app:hunter2@redis:6379", "a URL");
    expect(url.value).toBe("redis://app:***@redis:6379");
    const file = new ConfigError("redis.passwordFile", "/run/secrets/redis", "a readable file");
    expect(file.value).toBe("/run/secrets/redis");
  });

  it("truncates long values in the message", () => {
    const error = new ConfigError("lease.key", "k".repeat(500), "a shorter key");
    expect(error.message.length).toBeLessThan(200);
    expect(error.value).toBe("k".repeat(500));
  });
});

describe("configErrorFromConvict", () => {
  it("translates a format failure, looking the value up even when convict omits it", () => {
    const failure = convictFailure((config) => config.set("sweep.batchSize", 0));
    const error = configErrorFromConvict(failure, (key) => (key === "sweep.batchSize" ? 0 : "?"));
    expect(error).toMatchObject({
      key: "sweep.batchSize",
      value: 0,
      expected: "an integer between 1 and 10000",
      exitCode: 78,
    });
  });

  it("translates an undeclared key", () => {
    const failure = convictFailure((config) => config.load({ extra: { on: 1 } }));
    expect(configErrorFromConvict(failure, () => 1)).toMatchObject({
      key: "extra.on",
      value: 1,
      expected: "no such key (unknown keys are errors)",
    });
  });

  it("translates a section replaced by a scalar", () => {
    const failure = convictFailure((config) => config.load({ log: "debug" }));
    expect(configErrorFromConvict(failure, () => undefined)).toMatchObject({
      key: "log.level",
      expected: "a value (its parent is not a mapping)",
    });
  });

  it("strips convict's own wording and value suffix", () => {
    const failure = new Error('http.port: must be an integer: value was "x"\nlog.level: other');
    expect(configErrorFromConvict(failure, () => "x")).toMatchObject({
      key: "http.port",
      value: "x",
      expected: "an integer",
    });
  });

  it("keeps an unrecognised message whole rather than inventing a key", () => {
    expect(configErrorFromConvict("boom", () => undefined)).toMatchObject({
      key: "(configuration)",
      expected: "boom",
    });
  });
});
