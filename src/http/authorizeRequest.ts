import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { sha256, type HttpCredentials } from "../config/httpCredentials.js";

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
  const digest = sha256(presented);
  let matched = false;
  for (const expected of digests) {
    // compare() on the left: it runs for every digest, even after a match.
    matched = compare(digest, expected) || matched;
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

/** Whether the request carries credentials http.auth accepts. */
export function authorizeRequest(request: IncomingMessage, credentials: HttpCredentials): boolean {
  const secret = presentedSecret(request.headers.authorization, credentials.scheme);
  // A missing or malformed header is still compared (with ""): refusals take the same time.
  return matchesAnyDigest(secret ?? "", credentials.digests) && secret !== undefined;
}
