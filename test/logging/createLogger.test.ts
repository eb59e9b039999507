import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/createLogger.js";

function capture(): { lines: string[]; write: (line: string) => void } {
  const lines: string[] = [];
  return { lines, write: (line) => lines.push(line) };
}

describe("createLogger", () => {
  it("redacts the arguments ioredis attaches to failed commands (AUTH passwords included)", () => {
    const sink = capture();
    const logger = createLogger("info", sink);
    const error = Object.assign(new Error("WRONGPASS invalid username-password pair"), {
      command: { name: "auth", args: ["default", "hunter2"] },
    });
    logger.error({ err: error, redis: { password: "s3cret" } }, "connection failed");
    const [line = ""] = sink.lines;
    expect(line).not.toContain("hunter2");
    expect(line).not.toContain("s3cret");
    const parsed = JSON.parse(line) as {
      err: { command: { name: string; args: string }; message: string };
    };
    expect(parsed.err.command.args).toBe("[redacted]");
    expect(parsed.err.command.name).toBe("auth");
    expect(parsed.err.message).toContain("WRONGPASS");
  });

  it("redacts an HTTP request's Authorization header (http.auth's token or password)", () => {
    const sink = capture();
    const logger = createLogger("info", sink);
    const headers = { authorization: "Bearer s3cret-t0ken", host: "janitor:9478" };
    logger.warn({ req: { headers }, headers, authorization: "Basic dTpwdw==" }, "request");
    const [line = ""] = sink.lines;
    expect(line).not.toContain("s3cret-t0ken");
    expect(line).not.toContain("dTpwdw==");
    expect(line).toContain("janitor:9478");
  });
});
