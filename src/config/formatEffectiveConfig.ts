import type { JanitorConfig } from "../core/configTypes.js";

export const SECRET_MASK = "***";

/**
 * Hides the credentials of a Redis URL: `redis://user:***@host:6379`, and a `password` query
 * parameter (ioredis reads query parameters as options). The user-info ends at the last "@" of
 * the whole string, not of the authority: a password with an unencoded "/" or "?" must not leak
 * through an invalid URL's error message, and over-masking an odd URL costs nothing.
 */
export function maskRedisUrl(url: string): string {
  let masked = url;
  const start = url.indexOf("://");
  const at = url.lastIndexOf("@");
  if (start >= 0 && at > start) {
    const userInfo = url.slice(start + 3, at);
    const colon = userInfo.indexOf(":");
    // Without a colon the user-info could be a bare token: hide it whole.
    const shown = colon >= 0 ? `${userInfo.slice(0, colon)}:${SECRET_MASK}` : SECRET_MASK;
    masked = `${url.slice(0, start + 3)}${shown}${url.slice(at)}`;
  }
  return masked.replace(/([?&]password=)[^&#]*/giu, `$1${SECRET_MASK}`);
}

/** The effective configuration as `check-config` prints it: pretty JSON, secrets masked. */
export function formatEffectiveConfig(config: JanitorConfig): string {
  const shown: JanitorConfig = {
    ...config,
    redis: {
      ...config.redis,
      url: maskRedisUrl(config.redis.url),
      password: config.redis.password === "" ? "" : SECRET_MASK,
      sentinelPassword: config.redis.sentinelPassword === "" ? "" : SECRET_MASK,
    },
  };
  return JSON.stringify(shown, null, 2);
}
