/** Runs `work` over `count` indexes with at most `width` at once; the first failure stops it. */
export async function inWindow<T>(
  count: number,
  width: number,
  work: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < count) {
      const index = next;
      next += 1;
      try {
        results[index] = await work(index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
  return results;
}
