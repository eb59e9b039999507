import { fenceArguments, type Fence } from "../core/fence.js";

/**
 * The fence of a mutating script, in the same place in every script: its key is the last of
 * KEYS (absent when unfenced), its value an ARGV field ("" when unfenced). One server: the lease
 * key and value; Redis Cluster: the fence in the stream's own slot (src/core/fence.ts).
 */
export function withFence(
  keys: readonly string[],
  fence: Fence | undefined,
  stream: string,
): { keys: string[]; fenceValue: string } {
  if (fence === undefined) return { keys: [...keys], fenceValue: "" };
  const { key, value } = fenceArguments(fence, stream);
  return { keys: [...keys, key], fenceValue: value };
}
