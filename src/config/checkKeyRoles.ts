import { ConfigError, type ConfigProblems } from "./ConfigError.js";
import type { DiscoverConfig, JanitorConfig } from "../core/configTypes.js";
import {
  describeRole,
  findRoleCollisions,
  groupKeyRoles,
  leaseKeyRoles,
  type KeyRole,
  type RoleName,
} from "../core/keyRoles.js";
import { resolveGroup } from "../core/resolveGroup.js";

type RolesInput = Pick<JanitorConfig, "groups" | "lease"> &
  Partial<Pick<JanitorConfig, "discover" | "events">>;

/** The keys a pattern sets itself; the rest depend on the stream and group found. */
function patternKeyRoles(entry: DiscoverConfig, owner: string): KeyRole[] {
  const roles: KeyRole[] = [];
  const add = (key: string, role: RoleName, field: string): void => {
    if (key !== "") roles.push({ key, role, path: `${owner}.${field}`, owner });
  };
  add(entry.deadLetterStream, "dead-letter stream", "deadLetterStream");
  add(
    entry.requeueStream,
    entry.retryLane === true ? "retry lane" : "requeue target",
    "requeueStream",
  );
  return roles;
}

/** Every key the configuration gives a role, in configuration order. */
function configKeyRoles(config: RolesInput): KeyRole[] {
  const roles = leaseKeyRoles(config.lease.key);
  const eventsStream = config.events?.stream ?? "";
  if (eventsStream !== "") {
    roles.push({
      key: eventsStream,
      role: "events stream",
      path: "events.stream",
      owner: "events",
    });
  }
  config.groups.forEach((group, index) => {
    roles.push(...groupKeyRoles(resolveGroup(group), `groups[${index}]`));
  });
  (config.discover ?? []).forEach((entry, index) => {
    roles.push(...patternKeyRoles(entry, `discover[${index}]`));
  });
  return roles;
}

/**
 * Pairs another check reports already: an events stream that is a source (checkEventsStream),
 * a group's or a pattern's dead letters written where it reads or requeues (checkGroupRules).
 */
function reportedElsewhere(a: KeyRole, b: KeyRole): boolean {
  const roles = new Set([a.role, b.role]);
  if (roles.has("events stream") && roles.has("source stream")) return true;
  return (
    a.owner === b.owner &&
    roles.has("dead-letter stream") &&
    (roles.has("source stream") || roles.has("requeue target"))
  );
}

/**
 * A key in two roles that must not share one is refused, whichever pair it is: dead letters or
 * copies landing where a group reads them, another group's copies in a retry lane, the
 * janitor's events swept, a stream in place of the lease (nothing ever leads). The error names
 * the configuration key of one role and the other role with its key.
 */
export function checkKeyRoles(config: RolesInput, problems: ConfigProblems): void {
  for (const { blamed, other } of findRoleCollisions(configKeyRoles(config))) {
    if (reportedElsewhere(blamed, other)) continue;
    const expected = `a key of no other role: ${blamed.key} is also ${describeRole(other)}`;
    problems.add(new ConfigError(blamed.path, blamed.key, expected));
  }
}
