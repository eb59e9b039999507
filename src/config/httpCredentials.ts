import { createHash } from "node:crypto";
import { ConfigError } from "./ConfigError.js";
import { readSmallFile, SECRET_FILE_MAX_BYTES } from "./readSmallFile.js";
import type { HttpRoleFiles, JanitorConfig } from "../core/configTypes.js";
import { HTTP_ROLES, type HttpRole } from "./httpRoles.js";

type HttpAuthConfig = JanitorConfig["http"]["auth"];

/**
 * What http.auth accepts, kept only as SHA-256 digests: the Bearer token, or one
 * `user:password` per line of the basic auth file. Requests are compared digest to digest
 * (authorizeRequest), so the secrets themselves are not kept once read.
 */
export interface HttpCredentials {
  readonly scheme: "Bearer" | "Basic";
  readonly digests: readonly Buffer[];
  /**
   * The name of each digest, in the same order, for audit: a basic auth file's user, a token
   * file's `name:` (an unnamed token is `token-<line>`, never anything of the secret).
   */
  readonly names?: readonly string[];
}

/** One credentials file and the role its holders get. */
export interface RoleCredentials {
  readonly role: HttpRole;
  readonly credentials: HttpCredentials;
}

export function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** The rule that needs no file: at most one of the two keys (validateConfig reports it). */
export function checkHttpAuthRules(auth: HttpAuthConfig): void {
  if (auth.bearerTokenFile !== "" && auth.basicAuthFile !== "") {
    const expected =
      "empty when http.auth.bearerTokenFile is set: set at most one of http.auth.bearerTokenFile and http.auth.basicAuthFile";
    throw new ConfigError("http.auth.basicAuthFile", auth.basicAuthFile, expected);
  }
}

/**
 * Reads the file http.auth names (undefined when it names none): at start-up (loadConfig checks
 * it, the HTTP server reads it) and again at each SIGHUP, so a rotated secret is picked up
 * without a restart. Throws a ConfigError naming the key when the file cannot be read or holds
 * nothing usable. (That at most one is set is checked with the rest of the configuration.)
 */
export async function readHttpCredentials(
  auth: HttpAuthConfig,
): Promise<HttpCredentials | undefined> {
  const named = await readLegacyFile(auth);
  if (named === undefined) return undefined;
  return { scheme: named.scheme, digests: named.digests };
}

async function readLegacyFile(auth: HttpRoleFiles): Promise<HttpCredentials | undefined> {
  if (auth.bearerTokenFile !== "") {
    const key = "http.auth.bearerTokenFile";
    const text = await readSecret(key, auth.bearerTokenFile, "the bearer token");
    // Kubernetes secrets and `echo` end the file with a newline; a token never has spaces.
    const token = text.trim();
    if (token === "") {
      throw new ConfigError(
        key,
        auth.bearerTokenFile,
        "a file holding the bearer token (it is empty)",
      );
    }
    if (/\s/u.test(token)) {
      // A Bearer token has no whitespace (RFC 6750): two lines, or a token with a prefix.
      const expected = "a file holding one bearer token (it holds whitespace inside the token)";
      throw new ConfigError(key, auth.bearerTokenFile, expected);
    }
    return { scheme: "Bearer", digests: [sha256(token)], names: ["token-1"] };
  }
  if (auth.basicAuthFile !== "")
    return readBasicFile("http.auth.basicAuthFile", auth.basicAuthFile);
  return undefined;
}

async function readBasicFile(key: string, path: string): Promise<HttpCredentials> {
  const text = await readSecret(key, path, "user:password lines");
  const lines = basicAuthLines(key, path, text);
  return { scheme: "Basic", digests: lines.map((l) => l.digest), names: lines.map((l) => l.user) };
}

/**
 * Every credentials file of http.auth with its role: the http.auth file itself (viewers, as it
 * always meant), then http.auth.roles.viewer and .operator. Empty when http.auth is off. Read at
 * start-up and at each SIGHUP, like readHttpCredentials; throws a ConfigError naming the key.
 */
export async function readHttpAccess(auth: HttpAuthConfig): Promise<RoleCredentials[]> {
  const access: RoleCredentials[] = [];
  const legacy = await readLegacyFile(auth);
  if (legacy !== undefined) access.push({ role: "viewer", credentials: legacy });
  for (const role of HTTP_ROLES) {
    const files = auth.roles?.[role];
    if (files === undefined) continue;
    const key = `http.auth.roles.${role}`;
    const credentials =
      files.bearerTokenFile !== ""
        ? await readTokenFile(`${key}.bearerTokenFile`, files.bearerTokenFile)
        : await readBasicFile(`${key}.basicAuthFile`, files.basicAuthFile);
    access.push({ role, credentials });
  }
  return access;
}

/**
 * A role's token file: one token per line, `name:token` or a bare token (named `token-<line>`);
 * blank lines and `#` comments skipped. A token has no whitespace (RFC 6750) nor colon.
 */
async function readTokenFile(key: string, path: string): Promise<HttpCredentials> {
  const text = await readSecret(key, path, "name:token lines");
  const digests: Buffer[] = [];
  const names: string[] = [];
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? `token-${index + 1}` : line.slice(0, colon);
    const token = line.slice(colon + 1);
    if (name === "" || token === "" || /[\s:]/u.test(token) || /\s/u.test(name)) {
      const expected = `name:token lines, one token without whitespace on each (line ${index + 1} is not one)`;
      throw new ConfigError(key, path, expected);
    }
    digests.push(sha256(token));
    names.push(name);
  }
  if (digests.length === 0)
    throw new ConfigError(key, path, "a file of name:token lines (it has none)");
  return { scheme: "Bearer", digests, names };
}

async function readSecret(key: string, path: string, what: string): Promise<string> {
  const read = await readSmallFile(path, SECRET_FILE_MAX_BYTES);
  if (!read.ok) {
    const expected = read.problem.replace(/^a readable file/u, `a readable file holding ${what}`);
    throw new ConfigError(key, path, expected);
  }
  return read.text;
}

// What htpasswd writes: this file takes the password itself, not a hash of it.
const HTPASSWD_HASH = /^(\$apr1\$|\$2[aby]\$|\{SHA\})/u;

/**
 * One `user:password` per line (blank lines and `#` comments skipped, surrounding whitespace
 * trimmed); the user may not contain ":" (RFC 7617), the password may. A line that does not
 * parse is an error naming its number, never its text.
 */
function basicAuthLines(
  key: string,
  path: string,
  text: string,
): { user: string; digest: Buffer }[] {
  const digests: { user: string; digest: Buffer }[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const colon = line.indexOf(":");
    const where = `line ${index + 1}`;
    if (colon <= 0 || colon === line.length - 1) {
      const expected = `user:password lines, a non-empty user and password on each (${where} is not one)`;
      throw new ConfigError(key, path, expected);
    }
    if (HTPASSWD_HASH.test(line.slice(colon + 1))) {
      const expected = `user:password lines with the password itself (${where} holds an htpasswd hash)`;
      throw new ConfigError(key, path, expected);
    }
    digests.push({ user: line.slice(0, colon), digest: sha256(line) });
  }
  if (digests.length === 0) {
    throw new ConfigError(key, path, "a file of user:password lines (it has none)");
  }
  return digests;
}
