import { describe, expect, it } from "vitest";
import { CSRF_WINDOW_MS, CsrfTokens } from "../../src/ui/CsrfTokens.js";

/** The CSRF token's rules, on an injected clock (pure logic: no Redis, no server). */
describe("CsrfTokens", () => {
  const identity = "operator:abc";

  it("verifies its own token for the same credential, within the window it was issued in and the next", () => {
    const clock = { now: 10 * CSRF_WINDOW_MS + 5 };
    const tokens = new CsrfTokens({ now: () => clock.now });
    const token = tokens.issue(identity);
    expect(tokens.verify(identity, token)).toBe(true);
    clock.now += CSRF_WINDOW_MS;
    expect(tokens.verify(identity, token)).toBe(true);
    clock.now += CSRF_WINDOW_MS;
    expect(tokens.verify(identity, token)).toBe(false);
  });

  it("refuses another credential's token, another process's, a missing or malformed one, and a forged window", () => {
    const clock = { now: 10 * CSRF_WINDOW_MS };
    const tokens = new CsrfTokens({ now: () => clock.now });
    const token = tokens.issue(identity);
    expect(tokens.verify("operator:def", token)).toBe(false);
    expect(new CsrfTokens({ now: () => clock.now }).verify(identity, token)).toBe(false);
    for (const bad of [undefined, null, "", "x", `${token}x`, token.replace(/^\d+/u, "11")]) {
      expect(tokens.verify(identity, bad)).toBe(false);
    }
  });
});
