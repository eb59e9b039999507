import { slotFenceKey, type Fence } from "../core/fence.js";
import type { RedisClient } from "../redis/RedisClient.js";

/**
 * After a script of `stream` was refused as FENCED under a per-slot fence: the token its fence
 * holds when that is above ours. Either a newer term wrote there (we lost the lease), or an
 * earlier one whose token the counter forgot: LeaderTerm.moveTokenPast tells them apart, in
 * Redis. Undefined otherwise, or when the fence cannot be read: the refusal then stands.
 */
export async function fenceAboveToken(
  redis: RedisClient,
  fence: Fence,
  stream: string,
): Promise<number | undefined> {
  if (fence.slotToken === undefined) return undefined;
  const stored = await redis.get(slotFenceKey(stream, fence.key)).catch(() => null);
  if (stored === null || !/^\d{1,15}$/u.test(stored)) return undefined;
  const seen = Number(stored);
  return seen > fence.slotToken ? seen : undefined;
}
