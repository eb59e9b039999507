/**
 * Polls a condition until it holds or the deadline passes. For state that has no event to wait
 * on (another process, Redis); the interval is short and the deadline generous.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  {
    timeoutMs = 10_000,
    intervalMs = 10,
    what = "condition",
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== null && value !== false) return value;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
