import { companionKey } from "./fence.js";
import { defaultRetryLaneStream, type ResolvedGroup } from "./resolveGroup.js";

/** What the janitor does with a key. */
export type RoleName =
  | "lease key"
  | "events stream"
  | "dead-letter stream"
  | "retry lane"
  | "requeue target"
  | "source stream";

/** One key in one role, with the configuration path that gives it. */
export interface KeyRole {
  key: string;
  role: RoleName;
  /** The configuration key that sets it, e.g. `groups[1].deadLetterStream`. */
  path: string;
  /** The group name, for the roles of a group (undefined for the lease and events keys). */
  group?: string | undefined;
  /** Which entry the role belongs to (`groups[1]`, `discover[0]`, `lease`, `events`). */
  owner: string;
}

/** Which of two colliding roles the error is reported on: the first in this list. */
const BLAME_ORDER: readonly RoleName[] = [
  "lease key",
  "events stream",
  "dead-letter stream",
  "retry lane",
  "requeue target",
  "source stream",
];

/** The lease key and the keys kept beside it (the fencing-token counter, the holder record). */
export function leaseKeyRoles(leaseKey: string): KeyRole[] {
  return [leaseKey, companionKey(leaseKey, "token"), companionKey(leaseKey, "holder")].map(
    (key) => ({ key, role: "lease key", path: "lease.key", owner: "lease" }),
  );
}

/**
 * The roles of one group's keys. `owner` is its configuration entry. The requeue target is a
 * role of its own only when it is neither the source (requeue in place) nor the retry lane.
 */
export function groupKeyRoles(group: ResolvedGroup, owner: string): KeyRole[] {
  const of = (key: string, role: RoleName, field: string): KeyRole => ({
    key,
    role,
    path: `${owner}.${field}`,
    group: group.group,
    owner,
  });
  const roles = [of(group.stream, "source stream", "stream")];
  roles.push(of(group.deadLetterStream, "dead-letter stream", "deadLetterStream"));
  if (group.retryLaneStream !== undefined) {
    const named = group.retryLaneStream !== defaultRetryLaneStream(group.stream, group.group);
    const field = named ? "requeueStream" : "retryLane";
    roles.push(of(group.retryLaneStream, "retry lane", field));
  } else if (group.action === "requeue" && group.requeueStream !== group.stream) {
    roles.push(of(group.requeueStream, "requeue target", "requeueStream"));
  }
  return roles;
}

/**
 * Whether two roles may share one key. Several groups read one source; several groups may share
 * a dead-letter stream or a requeue target; a requeue target may be the source of a group of the
 * same name (a retry stream that group reads, swept as a group of its own). Anything else mixes
 * two kinds of entries in one stream (dead letters delivered again, copies meant for one group
 * read by another, the janitor's events swept) or a stream with the lease (nothing ever leads).
 */
function mayShare(a: KeyRole, b: KeyRole): boolean {
  if (a.role === b.role) {
    return (
      a.role === "source stream" || a.role === "dead-letter stream" || a.role === "requeue target"
    );
  }
  const roles = new Set([a.role, b.role]);
  if (roles.has("source stream") && roles.has("requeue target")) return a.group === b.group;
  return false;
}

/** One collision: `blamed` is the role whose configuration key the error names. */
export interface RoleCollision {
  blamed: KeyRole;
  other: KeyRole;
}

/** Checks each role against the roles before it, as they are added. */
export class KeyRoleMap {
  private readonly byKey = new Map<string, KeyRole[]>();

  /** The collisions `role` would make with the roles already added. */
  collisionsOf(role: KeyRole): RoleCollision[] {
    const collisions: RoleCollision[] = [];
    for (const earlier of this.byKey.get(role.key) ?? []) {
      if (mayShare(earlier, role)) continue;
      const laterBlamed = BLAME_ORDER.indexOf(role.role) <= BLAME_ORDER.indexOf(earlier.role);
      collisions.push(
        laterBlamed ? { blamed: role, other: earlier } : { blamed: earlier, other: role },
      );
    }
    return collisions;
  }

  add(role: KeyRole): void {
    this.byKey.set(role.key, [...(this.byKey.get(role.key) ?? []), role]);
  }
}

/** Every collision among `roles`, each pair once. */
export function findRoleCollisions(roles: readonly KeyRole[]): RoleCollision[] {
  const map = new KeyRoleMap();
  const collisions: RoleCollision[] = [];
  for (const role of roles) {
    collisions.push(...map.collisionsOf(role));
    map.add(role);
  }
  return collisions;
}

/** `groups[0]'s dead-letter stream (groups[0].deadLetterStream)` */
export function describeRole(role: KeyRole): string {
  // A list entry owns its keys (groups[0]'s); the lease and events sections are one key each.
  return !role.owner.includes("[")
    ? `the ${role.role} (${role.path})`
    : `${role.owner}'s ${role.role} (${role.path})`;
}
