import { UnsupportedRedisError } from "../redis/detectCapabilities.js";
import { endpointOf, explainRedisError } from "../redis/explainRedisError.js";
import { lastConnectionError } from "../redis/lastConnectionError.js";
import { isReplyError } from "../redis/replies.js";

/**
 * The one line a command prints when Redis fails it, in the words of explainRedisError: when the
 * connection never came up and Redis did not answer at all (refused, unresolvable, TLS, timeout),
 * "cannot reach Redis at host:port: <why>; <remedy>"; when Redis answered with a refusal
 * (WRONGPASS, NOPERM) or the server is too old, that refusal and its remedy alone.
 */
export function describeRedisFailure(
  error: unknown,
  context: { url: string; client: object; reached: boolean },
): string {
  const explained = explainRedisError(error, context);
  if (context.reached || error instanceof UnsupportedRedisError) return explained;
  const cause = isReplyError(error) ? error : (lastConnectionError(context.client) ?? error);
  if (isReplyError(cause)) return explained;
  return `cannot reach Redis at ${endpointOf(context.url)}: ${explained}`;
}
