/** Text exposition escaping, as prom-client does it. */
export const escapeHelp = (text: string): string =>
  text.replace(/\\/gu, "\\\\").replace(/\n/gu, "\\n");
const NEEDS_ESCAPE = /[\\\n"]/u;
const escapeLabel = (text: string): string =>
  NEEDS_ESCAPE.test(text) ? escapeHelp(text).replace(/"/gu, '\\"') : text;

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

/**
 * A piece of label text kept once however many series and families use it (see intern), with the
 * label values it was written from (to give labels back) and a row number: the per-group families
 * keep their values in columns indexed by the rows of their groups' pieces (see SeriesStore).
 */
export class Interned {
  private encoded: Buffer | undefined;

  constructor(
    readonly text: string,
    readonly values: readonly string[],
    readonly row: number,
  ) {}

  /** The text as UTF-8, encoded at the first scrape that writes it (see ExpositionWriter). */
  get bytes(): Buffer {
    this.encoded ??= Buffer.from(this.text);
    return this.encoded;
  }
}

/**
 * Every piece of label text in use, by its text. Weak, so the piece of a group that went away
 * goes with its last series (discovery adds and drops groups for as long as the process runs),
 * and its row is given to the next piece: rows stay as many as the pieces alive at once.
 */
const pool = new Map<string, WeakRef<Interned>>();

/**
 * Row numbers, counted apart per kind of piece (its label names: `stream,group`, `stream`,
 * `reason`...): a family's columns are as long as the pieces of its own kind, not of all kinds
 * (with 10,000 groups, 10,000 rows rather than the 30,000 of groups, streams and dead-letter
 * streams together).
 */
class RowSpace {
  private readonly free: number[] = [];
  private count = 0;

  take(): number {
    const row = this.free.pop();
    if (row !== undefined) return row;
    this.count += 1;
    return this.count - 1;
  }

  give(row: number): void {
    this.free.push(row);
  }
}

const spaces = new Map<string, RowSpace>();
const forget = new FinalizationRegistry<{ text: string; row: number; space: RowSpace }>(
  ({ text, row, space }) => {
    if (pool.get(text)?.deref() === undefined) pool.delete(text);
    space.give(row);
  },
);

function intern(text: string, values: readonly string[], names: readonly string[]): Interned {
  const known = pool.get(text)?.deref();
  if (known !== undefined) return known;
  const kind = names.join();
  let space = spaces.get(kind);
  if (space === undefined) {
    space = new RowSpace();
    spaces.set(kind, space);
  }
  const row = space.take();
  const made = new Interned(text, values, row);
  pool.set(text, new WeakRef(made));
  forget.register(made, { text, row, space });
  return made;
}

/**
 * The label part of one series, in two shared pieces: `head`, the pairs of its group (or stream),
 * `stream="...",group="..."`, the same object for every family and labels object of that group;
 * `tail`, the other pairs (`,reason="..."`, or ""), the same object for every series with them.
 * `key` identifies the series within a family: two labels objects with equal values get equal
 * keys. It is written when asked for, not kept: a leader holds tens of thousands of these.
 */
export class SeriesText {
  constructor(
    readonly head: Interned,
    readonly tail: Interned,
  ) {}

  get key(): string {
    return `${this.head.row}.${this.tail.row}`;
  }
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
  /** Heads by group labels object, and tails by value (see seriesWith). */
  private readonly heads = new WeakMap<object, Interned>();
  private readonly tails = new Map<string, Interned>();

  constructor(labelNames: readonly L[]) {
    this.labelNames = labelNames;
    const firstOther = labelNames.findIndex((name) => !GROUP_LABELS.has(name));
    this.headLength = firstOther === -1 ? labelNames.length : firstOther;
  }

  /**
   * The series of a group's labels object (stream, group) and the value of the one label after
   * them (status, reason, kind), without a labels object per series: the head is kept per group
   * labels object, the tail per value. For labels of a few values only: every tail is kept.
   */
  seriesWith(groupLabels: object, extra: string): SeriesText {
    let head = this.heads.get(groupLabels);
    if (head === undefined) {
      const values = this.labelNames.slice(0, this.headLength).map((name) => {
        const value = (groupLabels as Record<string, unknown>)[name];
        if (typeof value !== "string") throw new Error(`label ${name} is missing`);
        return value;
      });
      const names = this.labelNames.slice(0, this.headLength);
      head = intern(
        values.map((value, i) => pairText(names[i] as string, value)).join(","),
        values,
        names,
      );
      this.heads.set(groupLabels, head);
    }
    let tail = this.tails.get(extra);
    if (tail === undefined) {
      const name = this.labelNames[this.headLength];
      if (name === undefined || this.labelNames.length !== this.headLength + 1) {
        throw new Error(
          `seriesWith needs exactly one label after the group's (${this.labelNames.join()})`,
        );
      }
      tail = intern(`,${pairText(name, extra)}`, [extra], [name]);
      this.tails.set(extra, tail);
    }
    return new SeriesText(head, tail);
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
      const values = this.labelNames.map((name) => labels[name]);
      const head = intern(
        pairs.slice(0, this.headLength).join(","),
        values.slice(0, this.headLength),
        this.labelNames.slice(0, this.headLength),
      );
      const rest = pairs.slice(this.headLength);
      // join() rather than a template: one flat string, not a concatenation kept alive.
      const lead = rest.length === 0 || this.headLength === 0 ? [] : [""];
      const tail = intern(
        [...lead, ...rest].join(","),
        values.slice(this.headLength),
        this.labelNames.slice(this.headLength),
      );
      text = new SeriesText(head, tail);
      this.texts.set(labels, text);
    }
    return text;
  }
}
