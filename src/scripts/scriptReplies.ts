/**
 * Reading the flat replies of the scripts: each typed module (./safeTrim.ts, ...) names the
 * fields of its script's reply with these, so nothing outside src/scripts indexes a reply.
 */

/**
 * A script's reply that does not have the shape its typed module reads: the Lua script and its
 * TypeScript reader disagree. Redis answered, so this is a script failure, never an outage.
 */
export class ScriptReplyError extends Error {
  override name = "ScriptReplyError";
}

/** A reply that must be an array of at least `length` fields, else an error naming the script. */
export function replyFields(script: string, reply: unknown, length: number): unknown[] {
  if (!Array.isArray(reply) || reply.length < length) {
    throw new ScriptReplyError(`unexpected ${script} reply: ${JSON.stringify(reply)}`);
  }
  return reply;
}

/** A list of ids or names; [] when the field is absent or not a list. */
export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** A 0/1 flag. */
export function flag(value: unknown): boolean {
  return Number(value) === 1;
}

/** The "1"/"0" form of a boolean argument. */
export function flagArg(value: boolean): string {
  return value ? "1" : "0";
}

/** A group of the dead-letter stream that kept dead letters from being removed, and how many. */
export interface HeldBy {
  group: string;
  entries: number;
}

/** A flat `group, entries, ...` list (the dead-letter scripts' heldBackBy). */
export function heldByList(value: unknown): HeldBy[] {
  if (!Array.isArray(value)) return [];
  const list: HeldBy[] = [];
  for (let i = 0; i + 1 < value.length; i += 2) {
    list.push({ group: String(value[i]), entries: Number(value[i + 1]) });
  }
  return list;
}

/** A script whose reply is one integer: the integer, else an error saying `what`. */
export function integerReply(what: string, reply: unknown): number {
  if (typeof reply !== "number") {
    throw new ScriptReplyError(`unexpected reply to ${what}: ${JSON.stringify(reply)}`);
  }
  return reply;
}

/**
 * A fencing token a lease script handed out, or undefined for its 0: the lease key no longer
 * holds the caller's value, and nothing was written.
 */
export function tokenReply(what: string, reply: unknown): number | undefined {
  const token = integerReply(what, reply);
  return token === 0 ? undefined : token;
}
