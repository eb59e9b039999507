import { EventEmitter } from "node:events";
import type { ResolvedGroup } from "./resolveGroup.js";

/** What changed between two lists of groups, by `stream/group` id. */
export interface GroupChange {
  /** The whole new list. */
  readonly groups: readonly ResolvedGroup[];
  readonly added: readonly ResolvedGroup[];
  readonly removed: readonly ResolvedGroup[];
  /** Same id, different settings (new minIdleMs, action...). */
  readonly updated: readonly ResolvedGroup[];
}

/**
 * A source of the groups to look after, read at each pass (sweeps, scrapes, PEL scans). The set
 * can change at run time: a SIGHUP reload, and later groups found by pattern.
 */
export interface GroupSource {
  current(): readonly ResolvedGroup[];
  on(event: "change", listener: (change: GroupChange) => void): unknown;
  off(event: "change", listener: (change: GroupChange) => void): unknown;
}

/** Settings are scalars, or lists of them (backoffMs): a list read again is a new array. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => item === b[index]);
  }
  return a === b;
}

function sameSettings(a: ResolvedGroup, b: ResolvedGroup): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) =>
    sameValue(a[key as keyof ResolvedGroup], b[key as keyof ResolvedGroup]),
  );
}

/**
 * Owns the current list of resolved groups and tells subscribers when it changes. Whoever
 * decides what the list is (configuration, reload, discovery) calls replace(); whoever works on
 * groups reads current() or listens to "change".
 */
export class GroupSet extends EventEmitter<{ change: [GroupChange] }> implements GroupSource {
  private groups: readonly ResolvedGroup[];

  constructor(initial: readonly ResolvedGroup[] = []) {
    super();
    this.groups = Object.freeze([...initial]);
  }

  current(): readonly ResolvedGroup[] {
    return this.groups;
  }

  /** Installs a new list; emits "change" (and returns it) only when something differs. */
  replace(next: readonly ResolvedGroup[]): GroupChange | undefined {
    const before = new Map(this.groups.map((group) => [group.id, group]));
    const after = new Map(next.map((group) => [group.id, group]));
    const added = next.filter((group) => !before.has(group.id));
    const removed = this.groups.filter((group) => !after.has(group.id));
    const updated = next.filter((group) => {
      const old = before.get(group.id);
      return old !== undefined && !sameSettings(old, group);
    });
    const reordered = next.some((group, index) => this.groups[index]?.id !== group.id);
    this.groups = Object.freeze([...next]);
    if (added.length + removed.length + updated.length === 0 && !reordered) return undefined;
    const change: GroupChange = { groups: this.groups, added, removed, updated };
    this.emit("change", change);
    return change;
  }
}

/** A fixed list as a GroupSource (the one-shot `sweep`, tests). */
export function staticGroups(groups: readonly ResolvedGroup[]): GroupSource {
  return new GroupSet(groups);
}
