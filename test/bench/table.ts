/** Tables printed on the console and pasted into RESULTS.md: GitHub markdown, aligned. */
export interface Table {
  title: string;
  columns: string[];
  rows: (string | number)[][];
  notes?: string[];
}

/** Numbers with a sensible number of digits for a table cell. */
export function fmt(value: number, digits?: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (digits !== undefined) return value.toFixed(digits);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString("en-US");
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function renderTable(table: Table): string {
  const cells = table.rows.map((row) =>
    row.map((cell) => (typeof cell === "number" ? fmt(cell) : cell)),
  );
  const widths = table.columns.map((column, index) =>
    Math.max(column.length, ...cells.map((row) => (row[index] ?? "").length)),
  );
  const line = (values: readonly string[]): string =>
    `| ${values.map((value, index) => value.padEnd(widths[index] ?? 0)).join(" | ")} |`;
  const lines = [
    `### ${table.title}`,
    "",
    line(table.columns),
    `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`,
    ...cells.map(line),
  ];
  if (table.notes !== undefined && table.notes.length > 0) {
    lines.push("", ...table.notes.map((note) => `- ${note}`));
  }
  return `${lines.join("\n")}\n`;
}

/** A target from the issue and whether this run met it. */
export interface TargetCheck {
  scenario: string;
  target: string;
  measured: string;
  met: boolean;
}

export function targetsTable(checks: readonly TargetCheck[]): Table {
  return {
    title: "Targets",
    columns: ["scenario", "target", "measured", "met"],
    rows: checks.map((check) => [
      check.scenario,
      check.target,
      check.measured,
      check.met ? "yes" : "NO",
    ]),
  };
}
