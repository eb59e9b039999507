/** Text exposition escaping, as prom-client does it. */
export const escapeHelp = (text: string): string =>
  text.replace(/\\/gu, "\\\\").replace(/\n/gu, "\\n");
const escapeLabel = (text: string): string => escapeHelp(text).replace(/"/gu, '\\"');

/** `{name="value",...}`, or "" without labels: the label part of a sample line. */
export function labelText(labels: Readonly<Record<string, string | number>>): string {
  const pairs = Object.entries(labels).map(
    ([name, value]) => `${name}="${typeof value === "string" ? escapeLabel(value) : value}"`,
  );
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

export function valueText(value: number): string {
  if (Number.isNaN(value)) return "Nan";
  if (!Number.isFinite(value)) return value < 0 ? "-Inf" : "+Inf";
  return `${value}`;
}

/**
 * The label part of sample lines, `{stream="...",group="..."}`, formatted once per labels object
 * and shared by every family with the same label names: with 10,000 groups and a dozen gauges,
 * one string per group instead of one per series. The text lists the labels in the declared
 * order, so it also identifies the series (two objects with the same values give the same text).
 */
export class LabelTexts<L extends string> {
  readonly labelNames: readonly L[];
  private readonly texts = new WeakMap<object, string>();

  constructor(labelNames: readonly L[]) {
    this.labelNames = labelNames;
  }

  of(labels: Readonly<Record<L, string>>): string {
    let text = this.texts.get(labels);
    if (text === undefined) {
      const ordered: Record<string, string> = {};
      for (const name of this.labelNames) {
        const value = labels[name];
        if (typeof value !== "string") throw new Error(`label ${name} is missing`);
        ordered[name] = value;
      }
      text = labelText(ordered);
      this.texts.set(labels, text);
    }
    return text;
  }
}
