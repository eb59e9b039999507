import type { JanitorConfig } from "../core/configTypes.js";
import {
  describeRole,
  groupKeyRoles,
  KeyRoleMap,
  leaseKeyRoles,
  type KeyRole,
} from "../core/keyRoles.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";

type RoleConfig = Partial<Pick<JanitorConfig, "events" | "lease">>;

/** A discovered group left out, and why. */
export interface RefusedGroup {
  id: string;
  reason: string;
}

/** The keys of the lease and the events stream, then those of the listed groups. */
function reservedRoles(config: RoleConfig, listed: readonly ResolvedGroup[]): KeyRoleMap {
  const map = new KeyRoleMap();
  const leaseKey = config.lease?.key;
  if (leaseKey !== undefined) for (const role of leaseKeyRoles(leaseKey)) map.add(role);
  const eventsStream = config.events?.stream ?? "";
  if (eventsStream !== "") {
    map.add({ key: eventsStream, role: "events stream", path: "events.stream", owner: "events" });
  }
  listed.forEach((group, index) => {
    for (const role of groupKeyRoles(group, `groups[${index}]`)) map.add(role);
  });
  return map;
}

/**
 * The rule check-config applies to the listed groups, for the groups discovery finds: a group
 * whose keys would take a role another key has already (its dead letters in a listed group's
 * source, its retry lane on the lease key, ...) is left out, with the reason. Candidates are
 * taken in order, each checked against the listed groups and the candidates kept before it.
 */
export function withoutRoleCollisions(
  config: RoleConfig,
  listed: readonly ResolvedGroup[],
  candidates: readonly ResolvedGroup[],
): { kept: ResolvedGroup[]; refused: RefusedGroup[] } {
  const map = reservedRoles(config, listed);
  const kept: ResolvedGroup[] = [];
  const refused: RefusedGroup[] = [];
  for (const group of candidates) {
    const roles: KeyRole[] = groupKeyRoles(group, `discovered group ${group.id}`);
    const [collision] = roles.flatMap((role) => map.collisionsOf(role));
    if (collision !== undefined) {
      const { blamed, other } = collision;
      const reason = `${blamed.key} would be both ${describeRole(blamed)} and ${describeRole(other)}`;
      refused.push({ id: group.id, reason });
      continue;
    }
    for (const role of roles) map.add(role);
    kept.push(group);
  }
  return { kept, refused };
}
