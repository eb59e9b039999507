/** Columns padded to their widest cell; the `numeric` columns right-aligned. */
export function alignTable(
  rows: readonly (readonly string[])[],
  numeric: ReadonlySet<number>,
): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          numeric.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
