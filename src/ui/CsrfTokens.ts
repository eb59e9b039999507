import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** A token is good for the window it was issued in and the next one: one to two hours. */
export const CSRF_WINDOW_MS = 60 * 60 * 1000;

/**
 * The console's CSRF tokens: an HMAC-SHA256, under a secret of this process, of the caller's
 * identity (their credential: see Caller) and the hour it was issued in. Nothing is stored: a
 * token is checked by making it again. A token of another credential, of an earlier process
 * (a restart makes a new secret) or older than two windows does not verify; the comparison is
 * constant-time.
 */
export class CsrfTokens {
  private readonly secret: Buffer;
  private readonly now: () => number;

  constructor(options: { now?: () => number; secret?: Buffer } = {}) {
    this.secret = options.secret ?? randomBytes(32);
    this.now = options.now ?? Date.now;
  }

  issue(identity: string): string {
    const window = Math.floor(this.now() / CSRF_WINDOW_MS);
    return `${window}.${this.mac(window, identity).toString("base64url")}`;
  }

  verify(identity: string, token: string | null | undefined): boolean {
    const match = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/u.exec(token ?? "");
    if (match === null) return false;
    const window = Number(match[1]);
    const current = Math.floor(this.now() / CSRF_WINDOW_MS);
    const presented = Buffer.from(match[2] ?? "", "base64url");
    const expected = this.mac(window, identity);
    // Compared whatever the window, so the time does not tell a stale token from a forged one.
    const equal = presented.length === expected.length && timingSafeEqual(presented, expected);
    return equal && (window === current || window === current - 1);
  }

  private mac(window: number, identity: string): Buffer {
    return createHmac("sha256", this.secret).update(`${window}\n${identity}`).digest();
  }
}
