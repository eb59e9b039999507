import type { Interned } from "./LabelTexts.js";

/** Called for every live series: its two label pieces (see SeriesText) and its value. */
export type EachSeries = (head: Interned, tail: Interned, value: number) => void;

/**
 * Where a per-group family keeps its values. `mark` is a gauge's generation (see GroupGauge): a
 * series marked below the live generation is stale, kept but not exported; counters mark 0.
 */
export interface SeriesStore {
  /** Sets the series' value, or adds to it when `add` is true (a new series starts at 0). */
  write(head: Interned, tail: Interned, value: number, mark: number, add: boolean): void;
  delete(head: Interned, tail: Interned): void;
  clear(): void;
  /** Forgets the series marked below `mark` for good (groups that went away). */
  dropBelow(mark: number): void;
  /**
   * The series marked at or above `mark` at positions [from, to) (groups' rows, see span), in
   * that order: a scrape writes a family a span at a time.
   */
  forEach(mark: number, each: EachSeries, from?: number, to?: number): void;
  /** Positions to walk for every series: forEach(mark, each, 0, span()) gives them all. */
  span(): number;
}

const MIN_ROWS = 64;

/** The series of one tail (`,reason="..."` or "") of a family, one slot per group row. */
class Column {
  /** The head of the series at each row, undefined where the family has none: the presence. */
  heads: (Interned | undefined)[] = [];
  values = new Float64Array(MIN_ROWS);
  marks = new Uint32Array(MIN_ROWS);

  constructor(readonly tail: Interned) {}

  reserve(row: number): void {
    if (row < this.values.length) return;
    let size = this.values.length * 2;
    while (size <= row) size *= 2;
    const values = new Float64Array(size);
    values.set(this.values);
    const marks = new Uint32Array(size);
    marks.set(this.marks);
    this.values = values;
    this.marks = marks;
  }
}

/**
 * Values in columns: a typed array per tail, indexed by the row of the series' head (the group).
 * With 10,000 groups a family costs about 20 bytes per group and no object per series, where a
 * map of sample objects cost about 200 (object, boxed number, key string, table slot). For the
 * families whose extra labels take a few fixed values (reason, kind, status) or none.
 */
export class ColumnStore implements SeriesStore {
  private readonly columns: Column[] = [];

  private column(tail: Interned): Column {
    for (const column of this.columns) if (column.tail === tail) return column;
    const made = new Column(tail);
    this.columns.push(made);
    return made;
  }

  write(head: Interned, tail: Interned, value: number, mark: number, add: boolean): void {
    const column = this.column(tail);
    const { row } = head;
    column.reserve(row);
    const known = column.heads[row] === head;
    column.values[row] = add && known ? (column.values[row] ?? 0) + value : value;
    column.marks[row] = mark;
    if (!known) column.heads[row] = head;
  }

  delete(head: Interned, tail: Interned): void {
    const column = this.columns.find((candidate) => candidate.tail === tail);
    if (column?.heads[head.row] === head) column.heads[head.row] = undefined;
  }

  clear(): void {
    this.columns.length = 0;
  }

  dropBelow(mark: number): void {
    for (const column of this.columns) {
      const { heads, marks } = column;
      for (let row = 0; row < heads.length; row += 1) {
        if (heads[row] !== undefined && (marks[row] ?? 0) < mark) heads[row] = undefined;
      }
    }
  }

  span(): number {
    return Math.max(0, ...this.columns.map((column) => column.heads.length));
  }

  forEach(mark: number, each: EachSeries, from = 0, to = this.span()): void {
    for (let row = from; row < to; row += 1) {
      for (const { heads, values, marks, tail } of this.columns) {
        const head = heads[row];
        if (head !== undefined && (marks[row] ?? 0) >= mark) each(head, tail, values[row] ?? 0);
      }
    }
  }
}

interface MapSample {
  readonly head: Interned;
  readonly tail: Interned;
  value: number;
  mark: number;
}

/**
 * Values in a map by series: for a family whose extra label takes values without bound (consumer
 * names), where a column per value would be mostly empty.
 */
export class MapStore implements SeriesStore {
  private readonly samples = new Map<string, MapSample>();

  private static key(head: Interned, tail: Interned): string {
    return `${head.row}.${tail.row}`;
  }

  write(head: Interned, tail: Interned, value: number, mark: number, add: boolean): void {
    const key = MapStore.key(head, tail);
    const sample = this.samples.get(key);
    // A series holds its pieces, so their rows are not reused while it lives: a sample under
    // this key is this series.
    if (sample === undefined) {
      this.samples.set(key, { head, tail, value, mark });
      return;
    }
    sample.value = add ? sample.value + value : value;
    sample.mark = mark;
  }

  delete(head: Interned, tail: Interned): void {
    this.samples.delete(MapStore.key(head, tail));
  }

  clear(): void {
    this.samples.clear();
  }

  dropBelow(mark: number): void {
    for (const [key, sample] of this.samples) if (sample.mark < mark) this.samples.delete(key);
  }

  /** One position: the map's series are few (a consumer cap per group), walked at once. */
  span(): number {
    return 1;
  }

  forEach(mark: number, each: EachSeries, from = 0, to = 1): void {
    if (from > 0 || to < 1) return;
    for (const { head, tail, value, mark: own } of this.samples.values()) {
      if (own >= mark) each(head, tail, value);
    }
  }
}
