/** Text exposition escaping, as prom-client does it. */
export const escapeHelp = (text: string): string =>
  text.replace(/\\/gu, "\\\\").replace(/\n/gu, "\\n");
const escapeLabel = (text: string): string => escapeHelp(text).replace(/"/gu, '\\"');

const pairText = (name: string, value: string | number): string =>
  `${name}="${typeof value === "string" ? escapeLabel(value) : value}"`;

/** `{name="value",...}`, or "" without labels: the label part of a sample line. */
export function labelText(labels: Readonly<Record<string, string | number>>): string {
  const pairs = Object.entries(labels).map(([name, value]) => pairText(name, value));
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

export function valueText(value: number): string {
  if (Number.isNaN(value)) return "Nan";
  if (!Number.isFinite(value)) return value < 0 ? "-Inf" : "+Inf";
  return `${value}`;
}

/** A piece of label text kept once however many series and families use it (see intern). */
class Interned {
  constructor(
    readonly text: string,
    readonly id: number,
  ) {}
}

/**
 * Every piece of label text in use, by its text. Weak, so the piece of a group that went away
 * goes with its last series (discovery adds and drops groups for as long as the process runs).
 */
const pool = new Map<string, WeakRef<Interned>>();
const forget = new FinalizationRegistry<string>((text) => {
  if (pool.get(text)?.deref() === undefined) pool.delete(text);
});
let nextId = 0;

function intern(text: string): Interned {
  const known = pool.get(text)?.deref();
  if (known !== undefined) return known;
  const made = new Interned(text, nextId);
  nextId += 1;
  pool.set(text, new WeakRef(made));
  forget.register(made, text);
  return made;
}

/**
 * The label part of one series, in two shared pieces: `head`, the pairs of its group (or stream),
 * `stream="...",group="..."`, the same object for every family and labels object of that group;
 * `tail`, the other pairs (`,reason="..."`, or ""), the same object for every series with them.
 * `key` identifies the series within a family: two labels objects with equal values get equal keys.
 */
export interface SeriesText {
  readonly head: Interned;
  readonly tail: Interned;
  readonly key: string;
}

const GROUP_LABELS: ReadonlySet<string> = new Set(["stream", "group"]);

/**
 * The label texts of the per-group families with these label names, formatted once per labels
 * object. The pieces are interned by their text across every family, so with 10,000 groups and
 * 40 per-group families a group's pairs exist once, not once per family, labels object or
 * status; the lines are written `name{` + head + tail + `} value` at render time.
 */
export class LabelTexts<L extends string> {
  readonly labelNames: readonly L[];
  /** How many of the first label names are the group's (stream, group): they form the head. */
  private readonly headLength: number;
  private readonly texts = new WeakMap<object, SeriesText>();

  constructor(labelNames: readonly L[]) {
    this.labelNames = labelNames;
    const firstOther = labelNames.findIndex((name) => !GROUP_LABELS.has(name));
    this.headLength = firstOther === -1 ? labelNames.length : firstOther;
  }

  /** `{stream="...",group="..."}` (in the declared order), or "" without label names. */
  of(labels: Readonly<Record<L, string>>): string {
    const { head, tail } = this.series(labels);
    return this.labelNames.length === 0 ? "" : `{${head.text}${tail.text}}`;
  }

  series(labels: Readonly<Record<L, string>>): SeriesText {
    let text = this.texts.get(labels);
    if (text === undefined) {
      const pairs = this.labelNames.map((name) => {
        const value = labels[name];
        if (typeof value !== "string") throw new Error(`label ${name} is missing`);
        return pairText(name, value);
      });
      const head = intern(pairs.slice(0, this.headLength).join(","));
      const rest = pairs.slice(this.headLength);
      // join() rather than a template: one flat string, not a concatenation kept alive.
      const lead = rest.length === 0 || this.headLength === 0 ? [] : [""];
      const tail = intern([...lead, ...rest].join(","));
      text = { head, tail, key: `${head.id}.${tail.id}` };
      this.texts.set(labels, text);
    }
    return text;
  }
}
