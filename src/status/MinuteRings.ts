/** One key's rings: `series` values per minute, minute-major, NaN where nothing is known. */
interface Ring {
  values: Float32Array;
  /** The oldest and newest minute written (Unix minutes); `first` says since when it is kept. */
  first: number;
  last: number;
}

const MINUTE_MS = 60_000;

/**
 * Fixed-size ring buffers of per-minute points, one Float32Array per key (README "Web console",
 * history): `series` values for each of the last `minutes` minutes, so a key costs
 * series × minutes × 4 bytes whatever the sampling rate, and no object is made per point. Minutes
 * come from the times given (the samples' Redis clock): nothing here reads a clock. A point
 * older than the window is dropped; a key that goes away (keepOnly) frees its array.
 */
export class MinuteRings {
  private readonly rings = new Map<string, Ring>();

  constructor(
    readonly series: number,
    readonly minutes: number,
  ) {
    if (!Number.isInteger(series) || series < 1) throw new Error(`series must be >= 1: ${series}`);
    if (!Number.isInteger(minutes) || minutes < 1) {
      throw new Error(`minutes must be >= 1: ${minutes}`);
    }
  }

  /** The minute's value of one series (the last known value of the minute wins). */
  set(key: string, series: number, atMs: number, value: number): void {
    if (!Number.isFinite(value)) return;
    const at = this.slot(key, atMs);
    if (at !== undefined) at.ring.values[at.offset + series] = value;
  }

  /** Adds to the minute's count (a rate per minute); an unknown minute starts at 0. */
  add(key: string, series: number, atMs: number, count: number): void {
    const at = this.slot(key, atMs);
    if (at === undefined) return;
    const index = at.offset + series;
    const before = at.ring.values[index] ?? Number.NaN;
    at.ring.values[index] = (Number.isNaN(before) ? 0 : before) + count;
  }

  /** The newest `minutes` points of one series, oldest first, ending with endMs's minute. */
  read(key: string, series: number, endMs: number): Float32Array | undefined {
    const ring = this.rings.get(key);
    if (ring === undefined) return undefined;
    const out = new Float32Array(this.minutes).fill(Number.NaN);
    const end = Math.floor(endMs / MINUTE_MS);
    for (let i = 0; i < this.minutes; i += 1) {
      const minute = end - this.minutes + 1 + i;
      if (minute < ring.first || minute > ring.last || minute <= ring.last - this.minutes) continue;
      out[i] = ring.values[(minute % this.minutes) * this.series + series] ?? Number.NaN;
    }
    return out;
  }

  /** Start (Unix ms) of the key's oldest minute kept; undefined for an unknown key. */
  sinceMs(key: string): number | undefined {
    const ring = this.rings.get(key);
    if (ring === undefined) return undefined;
    return Math.max(ring.first, ring.last - this.minutes + 1) * MINUTE_MS;
  }

  /** Drops every key not in `keys` (a group that went away). */
  keepOnly(keys: ReadonlySet<string>): void {
    for (const key of this.rings.keys()) if (!keys.has(key)) this.rings.delete(key);
  }

  get size(): number {
    return this.rings.size;
  }

  /** Bytes of the points themselves (what the typed arrays hold). */
  pointBytes(): number {
    return this.rings.size * this.series * this.minutes * Float32Array.BYTES_PER_ELEMENT;
  }

  /**
   * Where atMs's minute lives in the key's ring, made on first use; moving on to a later minute
   * clears the minutes skipped (nothing known of them). Undefined when older than the window.
   */
  private slot(key: string, atMs: number): { ring: Ring; offset: number } | undefined {
    const minute = Math.floor(atMs / MINUTE_MS);
    let ring = this.rings.get(key);
    if (ring === undefined) {
      const values = new Float32Array(this.series * this.minutes).fill(Number.NaN);
      ring = { values, first: minute, last: minute };
      this.rings.set(key, ring);
    } else if (minute > ring.last) {
      const from = Math.max(ring.last + 1, minute - this.minutes + 1);
      for (let m = from; m <= minute; m += 1) {
        const offset = (m % this.minutes) * this.series;
        ring.values.fill(Number.NaN, offset, offset + this.series);
      }
      ring.last = minute;
    } else if (minute <= ring.last - this.minutes) {
      return undefined;
    }
    if (minute < ring.first) ring.first = minute;
    return { ring, offset: (minute % this.minutes) * this.series };
  }
}
