/**
 * Turns the permission errors operators meet when they first point the janitor at a locked-down
 * Redis into the ACL rule to add. Pure functions of the message, so tests need no server.
 */

const ACL_FILE = "deploy/redis/stream-janitor.acl";

/**
 * What a permission error refused. The sentences changed with Redis 7.2 (Valkey kept 7.2's):
 * 7.0 `NOPERM this user has no permissions to run the 'ping' command`, 7.2+ `NOPERM User <name>
 * has no permissions to run the 'ping' command`, `NOPERM No permissions to access a key`; inside a
 * script the code is ERR (7.0 `The user executing the script can't ...`, 7.2+ `ACL failure in
 * script: ...`). So they are read by their code and by what they name, never by the sentence.
 */
export interface PermissionDenial {
  refused: "command" | "key" | "channel";
  /** The command (7.0 and 7.2+), key or channel (7.2+ verbose form) quoted by the server. */
  name: string | undefined;
  /** Refused inside a script: the server names the script, not always the command. */
  inScript: boolean;
}

const NOPERM = /^NOPERM /u;
const SCRIPT_DENIED = /^ERR (ACL failure in script: |The user executing the script )/u;
const NAMED = /'([^']+)' (command|key|channel)\b/u;
const ADVICE_SEPARATOR = " -- ACL: ";

/** The denial a message reports, or undefined when it is not a permission error (or says nothing). */
export function permissionDenial(message: string): PermissionDenial | undefined {
  const inScript = SCRIPT_DENIED.test(message);
  if (!inScript && !NOPERM.test(message)) return undefined;
  // What the server said, not advice appended to it earlier.
  const said = message.split(ADVICE_SEPARATOR)[0] ?? message;
  const named = NAMED.exec(said);
  if (named?.[1] !== undefined) {
    return { refused: named[2] as PermissionDenial["refused"], name: named[1], inScript };
  }
  // Unnamed: the noun. Channels and keys first: 7.0's script sentences end in "the command".
  const refused = /\bchannels?\b/u.test(said)
    ? "channel"
    : /\bkeys?\b/u.test(said)
      ? "key"
      : /\b(sub)?command\b/u.test(said)
        ? "command"
        : undefined;
  return refused === undefined ? undefined : { refused, name: undefined, inScript };
}

/** The ACL advice for a permission error, or undefined when it is not one. */
export function aclAdvice(message: string): string | undefined {
  const denial = permissionDenial(message);
  if (denial === undefined) return undefined;
  const { refused, name, inScript } = denial;
  if (refused === "command") {
    if (name === undefined) {
      return `a command ${inScript ? "inside the script " : ""}is not allowed for the ACL user: ACL LOG on the server names it; add "+command" to its rules (the full list is in ${ACL_FILE})`;
    }
    const shown = name.toUpperCase().replace("|", " ");
    if (inScript) {
      return `a command inside the script is not allowed for the ACL user: ${shown}; add "+${name}" to its rules (ACL LOG has the details; the full list is in ${ACL_FILE})`;
    }
    return `the ACL user may not run ${shown}: add "+${name}" to its rules (see ${ACL_FILE})`;
  }
  if (refused === "key") {
    if (inScript) {
      return `a key used by the script is outside the ACL user's key patterns: ACL LOG names it; add "~pattern" to its rules (see ${ACL_FILE})`;
    }
    if (name !== undefined) {
      return `the ACL user may not touch the key '${name}': add a key pattern covering it ("~pattern"; see ${ACL_FILE})`;
    }
    return `the ACL user may not touch this key: add a key pattern covering it ("~pattern"; ACL LOG names the key; see ${ACL_FILE})`;
  }
  if (inScript) {
    return `a channel used by the script is outside the ACL user's channel patterns: ACL LOG names it; add "&pattern" to its rules`;
  }
  if (name !== undefined) {
    return `the ACL user may not use the channel '${name}': add "&pattern" to its rules`;
  }
  return `the ACL user may not use this channel: add "&pattern" to its rules (ACL LOG names it)`;
}

/** Appends the advice to a permission error's message, once. Returns the same error. */
export function withAclAdvice<E>(error: E): E {
  if (!(error instanceof Error) || error.message.includes(ADVICE_SEPARATOR)) return error;
  const advice = aclAdvice(error.message);
  if (advice !== undefined) error.message = `${error.message}${ADVICE_SEPARATOR}${advice}`;
  return error;
}
