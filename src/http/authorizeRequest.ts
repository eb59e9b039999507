import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { sha256, type HttpCredentials, type RoleCredentials } from "../config/httpCredentials.js";
import type { Caller } from "./HttpRoute.js";

/** Compares two equal-length buffers in constant time (crypto.timingSafeEqual). */
export type ConstantTimeCompare = (a: Buffer, b: Buffer) => boolean;

/**
 * Whether `presented` is one of the secrets `digests` were made of. Both sides are SHA-256
 * digests, so every comparison is of 32 bytes whatever was sent (the length of the secret does
 * not leak either), and every digest is compared, without stopping at a match: the time does not
 * tell which line of a basic auth file matched, nor whether one did.
 */
export function matchesAnyDigest(
  presented: string,
  digests: readonly Buffer[],
  compare: ConstantTimeCompare = timingSafeEqual,
): boolean {
  return matchingIndex(presented, digests, compare) >= 0;
}

/** As matchesAnyDigest, but which digest matched (the last one that did), -1 for none. */
function matchingIndex(
  presented: string,
  digests: readonly Buffer[],
  compare: ConstantTimeCompare = timingSafeEqual,
): number {
  const digest = sha256(presented);
  let matched = -1;
  for (const [index, expected] of digests.entries()) {
    // compare() first: it runs for every digest, even after a match.
    if (compare(digest, expected)) matched = index;
  }
  return matched;
}

/**
 * The secret the Authorization header carries for `scheme`: the token of `Bearer <token>`, the
 * decoded `user:password` of `Basic <base64>`; undefined when the header is missing, of another
 * scheme or malformed. The scheme's name is case-insensitive (RFC 9110 section 11.1).
 */
export function presentedSecret(
  header: string | undefined,
  scheme: HttpCredentials["scheme"],
): string | undefined {
  if (header === undefined) return undefined;
  const match = /^([A-Za-z]+) +(\S+) *$/u.exec(header);
  if (match?.[1]?.toLowerCase() !== scheme.toLowerCase()) return undefined;
  const value = match[2] ?? "";
  if (scheme === "Bearer") return value;
  if (!/^[A-Za-z0-9+/]+={0,2}$/u.test(value)) return undefined;
  const decoded = Buffer.from(value, "base64").toString("utf8");
  return decoded.indexOf(":") > 0 ? decoded : undefined;
}

/**
 * Who the request's credentials are, of every file http.auth reads (each file compared whole,
 * whatever matched before): undefined when none accepts them. A credential in two files acts
 * with the higher role (the later file: operators come after viewers).
 */
export function identifyCaller(
  request: IncomingMessage,
  access: readonly RoleCredentials[],
): Caller | undefined {
  let found: Caller | undefined;
  for (const { role, credentials } of access) {
    const secret = presentedSecret(request.headers.authorization, credentials.scheme);
    // A missing or malformed header is still compared (with ""): refusals take the same time.
    const index = matchingIndex(secret ?? "", credentials.digests);
    if (secret === undefined || index < 0) continue;
    const name = credentials.names?.[index] ?? `token-${index + 1}`;
    found = { role, name, identity: `${role}:${sha256(secret).toString("hex")}` };
  }
  return found;
}
