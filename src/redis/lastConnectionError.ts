/**
 * The last connection error of each client. ioredis hides the cause of a failed command behind
 * "Reached the max retries per request limit" or "Command timed out"; the cause was emitted
 * earlier as a connection "error" event, so clients record it here (see explainRedisError).
 */
const lastConnectionErrors = new WeakMap<object, Error>();

export function recordConnectionError(client: object, error: Error): void {
  lastConnectionErrors.set(client, error);
}

export function clearConnectionError(client: object): void {
  lastConnectionErrors.delete(client);
}

export function lastConnectionError(client: object): Error | undefined {
  return lastConnectionErrors.get(client);
}
