/** Metric names a PromQL expression selects (not functions, keywords, labels or durations). */
export function metricNames(expr: string): string[] {
  const KEYWORDS = new Set(["and", "or", "unless", "by", "without", "on", "ignoring"]);
  for (const keyword of ["group_left", "group_right", "offset", "bool", "atan2", "inf", "nan"]) {
    KEYWORDS.add(keyword);
  }
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, " ") // string literals
    .replace(/#[^\n]*/g, " ") // comments
    .replace(/\{[^}]*\}/g, " ") // label matchers
    .replace(/\[[^\]]*\]/g, " ") // ranges and subqueries
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " "); // label lists
  const names: string[] = [];
  // Numbers and durations (they start with a digit) are matched and dropped.
  for (const match of stripped.matchAll(/\d[\w.]*|([A-Za-z_:][\w:]*)(\s*\()?/g)) {
    const [, name, call] = match;
    if (name === undefined || call !== undefined || KEYWORDS.has(name.toLowerCase())) continue;
    names.push(name);
  }
  return names;
}
