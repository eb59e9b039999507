import { aclAdvice, permissionDenial } from "./aclAdvice.js";
import { describeTlsError } from "./describeTlsError.js";
import { lastConnectionError } from "./lastConnectionError.js";

/** `host:port` of a Redis URL, never its credentials. */
export function endpointOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port === "" ? "6379" : parsed.port}`;
  } catch {
    return "the configured Redis";
  }
}

const WRAPPERS =
  /max retries per request|Command timed out|Connection is closed|Stream isn't writeable/iu;
const TLS = /TLS|SSL|certificate|CERT_|self[- ]signed/iu;

/**
 * Turns what ioredis reports into a sentence an operator can act on: the cause behind the
 * client's wrappers (lastConnectionError), the endpoint, and what to change.
 */
export function explainRedisError(
  error: unknown,
  context: { url: string; client?: object },
): string {
  let cause = error instanceof Error ? error : new Error(String(error));
  const recorded = context.client === undefined ? undefined : lastConnectionError(context.client);
  if (recorded !== undefined && WRAPPERS.test(cause.message)) cause = recorded;
  const code = (cause as { code?: unknown }).code;
  const endpoint = endpointOf(context.url);
  const tls = context.url.startsWith("rediss://");
  const message = cause.message;
  if (code === "ECONNREFUSED") {
    return `connection refused by ${endpoint} (ECONNREFUSED): nothing listens there; is Redis running, and is redis.url right?`;
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return `the host of ${endpoint} does not resolve (${code}): check redis.url`;
  }
  const tlsDescription = describeTlsError(cause);
  if (tlsDescription !== undefined) return `${tlsDescription} (${endpoint})`;
  if (message.startsWith("TLS handshake failed")) return `${message} (${endpoint})`;
  if (TLS.test(message) || (typeof code === "string" && TLS.test(code))) {
    return `TLS handshake with ${endpoint} failed: ${message}`;
  }
  if (tls && (code === "ETIMEDOUT" || /timed out/iu.test(message))) {
    return `TLS handshake with ${endpoint} did not complete (${typeof code === "string" ? code : "timeout"}): is it a TLS port, and does it trust this client?`;
  }
  if (/^(WRONGPASS|NOAUTH)|invalid password|invalid username-password/iu.test(message)) {
    const reply = message.split(" ")[0] ?? "WRONGPASS";
    return `authentication failed at ${endpoint} (${reply}): check the user and redis.password or redis.passwordFile`;
  }
  // Read from what the server said, whether or not the client appended its advice already.
  const said = message.split(" -- ACL: ")[0] ?? message;
  const denial = permissionDenial(said);
  const advice = aclAdvice(said);
  if (denial?.refused === "command" && denial.name !== undefined && !denial.inScript) {
    const command = denial.name;
    return `NOPERM: the ACL user may not run ${command.toUpperCase()} at ${endpoint}: add +${command.toLowerCase()} to its ACL rule (see deploy/redis/stream-janitor.acl)`;
  }
  if (denial?.inScript === true && advice !== undefined) return `${said} -- ACL: ${advice}`;
  if (message.startsWith("NOPERM")) {
    if (advice !== undefined) return `NOPERM at ${endpoint}: ${advice}`;
    return `NOPERM at ${endpoint}: ${said.slice("NOPERM ".length)}: the ACL rule must allow it (see deploy/redis/stream-janitor.acl)`;
  }
  if (code === "ETIMEDOUT" || /timed out/iu.test(message)) {
    return `${endpoint} did not answer in time (${typeof code === "string" ? code : "timeout"})`;
  }
  return message;
}
