/** A consumer group of the dead-letter stream that kept dead letters from being removed. */
export interface HeldBack {
  group: string;
  /** Selected dead letters it holds pending or has not been delivered yet. */
  entries: number;
}

/** Adds up, over the pages of a purge or a redrive, the `heldBackBy` lists their scripts return. */
export class HeldBackTally {
  private readonly entries = new Map<string, number>();

  add(heldBackBy: readonly HeldBack[]): void {
    for (const { group, entries } of heldBackBy) {
      this.entries.set(group, (this.entries.get(group) ?? 0) + entries);
    }
  }

  /** By group name, as XINFO GROUPS lists them, whichever page met a group first. */
  list(): HeldBack[] {
    return [...this.entries]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([group, entries]) => ({ group, entries }));
  }

  /** `{ heldBackBy }` when some group held entries back, else nothing (the summaries' shape). */
  field(): { heldBackBy?: HeldBack[] } {
    return this.entries.size === 0 ? {} : { heldBackBy: this.list() };
  }
}

/** The human form: `; held back by group auditors (8), group archivers (1)`, or "". */
export function describeHeldBack(heldBackBy: readonly HeldBack[] | undefined): string {
  if (heldBackBy === undefined || heldBackBy.length === 0) return "";
  const groups = heldBackBy.map((held) => `group ${held.group} (${held.entries})`).join(", ");
  return `; held back by ${groups}, which still need them (pending, or not yet delivered)`;
}
