/**
 * The deepest a configuration file may nest arrays and mappings. A real one needs about 5
 * (groups[0].backoff...); the checks after parsing walk the value recursively, so a file nested
 * 100,000 deep would overflow the stack and exit 1 instead of naming the problem.
 */
export const MAX_CONFIG_NESTING = 100;

/** Whether `value` nests arrays and objects more than `limit` deep. Iterative: any depth is safe. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item;
    if (typeof node !== "object" || node === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
