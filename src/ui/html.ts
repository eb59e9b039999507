/**
 * The one way the console writes HTML: the `html` tag escapes every interpolated value unless it
 * is itself the product of `html` (SafeHtml). Escaping is the default, never an opt-in, because
 * stream, group and consumer names are arbitrary bytes chosen by whoever writes to Redis.
 */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What may be interpolated: text is escaped, SafeHtml kept, lists joined, nothing dropped. */
export type HtmlValue = SafeHtml | string | number | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text made safe in element content and in quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/gu, (character) => ESCAPES[character] ?? character);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.text;
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join("");
  return escapeHtml(String(value));
}

/**
 * The templates' own indentation (Prettier formats `html` templates as HTML) left out of what is
 * sent: a newline followed by spaces becomes a newline. Only the literal parts are trimmed, once
 * per template; interpolated values (a `<pre>` of command lines) are kept as they are.
 */
const trimmed = new WeakMap<TemplateStringsArray, readonly string[]>();

function literalParts(strings: TemplateStringsArray): readonly string[] {
  let parts = trimmed.get(strings);
  if (parts === undefined) {
    parts = strings.map((part) => part.replace(/\n[ \t]+/gu, "\n"));
    trimmed.set(strings, parts);
  }
  return parts;
}

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  const parts = literalParts(strings);
  let out = parts[0] ?? "";
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + (parts[i + 1] ?? "");
  return new SafeHtml(out);
}
