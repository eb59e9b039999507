import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readHttpCredentials, sha256 } from "../../src/config/httpCredentials.js";
import {
  expectConfigError,
  loadContent,
  makeTempDir,
  validated,
  type TempDir,
} from "./configFiles.js";

const off = { bearerTokenFile: "", basicAuthFile: "" };

describe("http.auth files", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("refuses both keys set, naming both (validation alone, no file read)", async () => {
    const auth = { bearerTokenFile: "/run/token", basicAuthFile: "/run/users" };
    const error = await expectConfigError(validated({ http: { auth } }), {
      key: "http.auth.basicAuthFile",
      value: "/run/users",
      expected:
        "empty when http.auth.bearerTokenFile is set: set at most one of http.auth.bearerTokenFile and http.auth.basicAuthFile",
    });
    expect(error.problems).toHaveLength(1);
  });

  it("reads the token trimmed of surrounding whitespace (a Kubernetes secret ends with a newline)", async () => {
    const bearerTokenFile = await dir.write("token", "  s3cret-t0ken\n");
    const config = await loadContent(dir, { http: { auth: { bearerTokenFile } } });
    expect(config.http.auth).toEqual({ ...off, bearerTokenFile });
    expect(await readHttpCredentials(config.http.auth)).toEqual({
      scheme: "Bearer",
      digests: [sha256("s3cret-t0ken")],
    });
  });

  it("reads user:password lines, skipping blank lines and comments; a password may hold colons", async () => {
    const text = "# scrapers\nprometheus:pw\r\n\n  alice:a:b  \n";
    const basicAuthFile = await dir.write("users", text);
    await loadContent(dir, { http: { auth: { basicAuthFile } } });
    expect(await readHttpCredentials({ ...off, basicAuthFile })).toEqual({
      scheme: "Basic",
      digests: [sha256("prometheus:pw"), sha256("alice:a:b")],
    });
  });

  it("is off with neither key", async () => {
    expect(await readHttpCredentials(off)).toBeUndefined();
  });

  it("exits 78 naming bearerTokenFile when the file is missing, empty, holds two tokens or is a directory", async () => {
    const missing = `${dir.path}/no-such-token`;
    await expectConfigError(loadContent(dir, { http: { auth: { bearerTokenFile: missing } } }), {
      key: "http.auth.bearerTokenFile",
      value: missing,
      expected: "a readable file holding the bearer token (ENOENT)",
    });
    const empty = await dir.write("empty-token", " \n");
    await expectConfigError(loadContent(dir, { http: { auth: { bearerTokenFile: empty } } }), {
      key: "http.auth.bearerTokenFile",
      value: empty,
      expected: "a file holding the bearer token (it is empty)",
    });
    for (const text of ["first\nsecond\n", "Bearer s3cret\n"]) {
      const twoTokens = await dir.write("two-tokens", text);
      await expectConfigError(
        loadContent(dir, { http: { auth: { bearerTokenFile: twoTokens } } }),
        {
          key: "http.auth.bearerTokenFile",
          value: twoTokens,
          expected: "a file holding one bearer token (it holds whitespace inside the token)",
        },
      );
    }
    await expectConfigError(loadContent(dir, { http: { auth: { bearerTokenFile: dir.path } } }), {
      key: "http.auth.bearerTokenFile",
      value: dir.path,
      expected: "a regular file (found a directory)",
    });
  });

  it("exits 78 naming basicAuthFile when it is missing or has no valid user:password line, never quoting a line", async () => {
    const missing = `${dir.path}/no-such-users`;
    await expectConfigError(loadContent(dir, { http: { auth: { basicAuthFile: missing } } }), {
      key: "http.auth.basicAuthFile",
      value: missing,
      expected: "a readable file holding user:password lines (ENOENT)",
    });
    const cases: [string, string][] = [
      ["# nobody yet\n\n", "a file of user:password lines (it has none)"],
      [
        "prometheus:pw\njust-a-s3cret\n",
        "user:password lines, a non-empty user and password on each (line 2 is not one)",
      ],
      [
        ":s3cret\n",
        "user:password lines, a non-empty user and password on each (line 1 is not one)",
      ],
      [
        "alice:\n",
        "user:password lines, a non-empty user and password on each (line 1 is not one)",
      ],
      [
        "alice:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/\n",
        "user:password lines with the password itself (line 1 holds an htpasswd hash)",
      ],
    ];
    for (const [index, [text, expected]] of cases.entries()) {
      const basicAuthFile = await dir.write(`users-${index}`, text);
      const error = await expectConfigError(
        loadContent(dir, { http: { auth: { basicAuthFile } } }),
        { key: "http.auth.basicAuthFile", value: basicAuthFile, expected },
      );
      expect(error.message).not.toContain("s3cret");
    }
  });
});
