import { ConfigError, type ConfigProblems } from "./ConfigError.js";
import { isMapping } from "./checkFileValues.js";
import type { HttpRoleFiles, HttpRolesConfig, JanitorConfig } from "../core/configTypes.js";

type Mapping = Record<string, unknown>;

/** The roles, lowest first: a credential found in both files acts as the higher one. */
export const HTTP_ROLES = ["viewer", "operator"] as const;
export type HttpRole = (typeof HTTP_ROLES)[number];

const ROLE_KEYS = ["bearerTokenFile", "basicAuthFile"] as const;

/**
 * Takes http.auth.roles and http.ui.actions out of the file before convict sees them (convict
 * has no optional keys: a configuration without them keeps http.auth and http.ui as they always
 * were) and checks them by hand: known roles, known keys, strings, exactly one file per role; a
 * boolean. Returns the file without them, and what was given and sound (`bad` when a check failed).
 */
export function takeHttpExtras(
  file: Mapping,
  problems: ConfigProblems,
): { file: Mapping; roles?: HttpRolesConfig; actions?: boolean; bad?: true } {
  const http = file.http;
  if (!isMapping(http)) return { file };
  const { roles: rawRoles, ...auth } = isMapping(http.auth) ? http.auth : {};
  const { actions: rawActions, ...ui } = isMapping(http.ui) ? http.ui : {};
  const rest = {
    ...file,
    http: {
      ...http,
      ...(isMapping(http.auth) && { auth }),
      ...(isMapping(http.ui) && { ui }),
    },
  };
  const before = problems.count;
  const roles = rawRoles == null ? undefined : problems.check(() => checkRoles(rawRoles));
  if (rawActions != null && typeof rawActions !== "boolean") {
    problems.add(new ConfigError("http.ui.actions", rawActions, "true or false"));
  }
  return {
    file: rest,
    ...(roles !== undefined && { roles }),
    ...(typeof rawActions === "boolean" && { actions: rawActions }),
    ...(problems.count > before && { bad: true as const }),
  };
}

function checkRoles(raw: unknown): HttpRolesConfig {
  const path = "http.auth.roles";
  if (!isMapping(raw)) throw new ConfigError(path, raw, "a mapping of roles: viewer, operator");
  const roles: HttpRolesConfig = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!(HTTP_ROLES as readonly string[]).includes(name)) {
      const expected = `a known role: one of ${HTTP_ROLES.join(", ")}`;
      throw new ConfigError(`${path}.${name}`, value, expected);
    }
    roles[name as HttpRole] = checkRole(`${path}.${name}`, value);
  }
  return roles;
}

function checkRole(path: string, raw: unknown): HttpRoleFiles {
  const one = "exactly one of bearerTokenFile and basicAuthFile";
  if (!isMapping(raw)) throw new ConfigError(path, raw, `a mapping with ${one}`);
  const files: HttpRoleFiles = { bearerTokenFile: "", basicAuthFile: "" };
  for (const [key, value] of Object.entries(raw)) {
    if (!(ROLE_KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(`${path}.${key}`, value, `a known key: one of ${ROLE_KEYS.join(", ")}`);
    }
    if (typeof value !== "string") throw new ConfigError(`${path}.${key}`, value, "a file path");
    files[key as keyof HttpRoleFiles] = value;
  }
  if (files.bearerTokenFile !== "" && files.basicAuthFile !== "") {
    const expected = `empty when ${path}.bearerTokenFile is set: set exactly one of the two`;
    throw new ConfigError(`${path}.basicAuthFile`, files.basicAuthFile, expected);
  }
  if (files.bearerTokenFile === "" && files.basicAuthFile === "") {
    throw new ConfigError(path, raw, `a mapping with ${one}`);
  }
  return files;
}

const OPERATOR_NEEDED = "actions need http.auth.roles.operator (bearerTokenFile or basicAuthFile)";

/** http.ui.actions needs someone who may act: http.auth on, with an operator. */
export function checkActionsNeedOperators(http: JanitorConfig["http"]): void {
  if (http.ui.actions !== true) return;
  const { auth } = http;
  if (auth.roles?.operator !== undefined) return;
  const off =
    auth.bearerTokenFile === "" && auth.basicAuthFile === "" && auth.roles?.viewer === undefined;
  const state = off ? "http.auth is off" : "http.auth has no operator";
  throw new ConfigError("http.ui.actions", true, `false while ${state}: ${OPERATOR_NEEDED}`);
}
