/**
 * The bytes of whole entries one page view may read (ghost checks, dead letters of a group whose
 * index is not complete, bodies with showBodies). Redis before 8.10 cannot read part of an entry
 * nor its size without its body, so the budget is checked before each read and spent after it:
 * a read starts only while bytes are left, so a view reads at most the budget plus one entry.
 * Reads of unknown entries take one entry per command; a scan of a stream sizes its next read by
 * the entries already seen (about 0.1-0.2 ms of Redis time per MB for a plain XRANGE of one
 * entry, against 7 ms per MB inside a script).
 */
export class ByteBudget {
  private spent = 0;

  constructor(readonly limit: number) {}

  get left(): boolean {
    return this.spent < this.limit;
  }

  /** Bytes left, never negative. */
  get remaining(): number {
    return Math.max(0, this.limit - this.spent);
  }

  spend(bytes: number): void {
    this.spent += bytes;
  }
}

/** The bytes of an entry as read: its id and every field name and value. */
export function entryBytes(id: Buffer, flat: readonly Buffer[]): number {
  return flat.reduce((sum, part) => sum + part.length, id.length);
}
