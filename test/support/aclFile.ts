import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const ACL_FILE = new URL("../../deploy/redis/stream-janitor.acl", import.meta.url).pathname;

/**
 * The users of deploy/redis/stream-janitor.acl with the two edits its README asks operators to
 * make, and nothing else: a password, and key patterns for the streams of the test instead of
 * the example ones (`~orders` ...). Every command rule stays exactly as in the file; a `%R~`
 * (read-only) pattern stays read-only.
 */
export async function aclFileForTest(
  dir: string,
  password: string,
  keyPatterns: readonly string[],
): Promise<string> {
  const adapted = await aclLinesForTest(password, keyPatterns);
  const path = join(dir, "users.acl");
  await writeFile(path, `${adapted.join("\n")}\n`);
  return path;
}

/** The lines aclFileForTest writes (each `user <name> <rules>`, for ACL SETUSER on a Cluster). */
export async function aclLinesForTest(
  password: string,
  keyPatterns: readonly string[],
): Promise<string[]> {
  const lines = (await readFile(ACL_FILE, "utf8")).split("\n").filter((line) => line !== "");
  return lines.map((line) => {
    // A selector, `(~events +xadd)`: its commands on the test's keys (Redis 7 merges the tokens).
    const selectors = (line.match(/\([^)]*\)/gu) ?? []).map((selector) => {
      const commands = selector
        .slice(1, -1)
        .split(" ")
        .filter((token) => token.startsWith("+"));
      return `(${[...commands, ...keyPatterns.map((pattern) => `~${pattern}`)].join(" ")})`;
    });
    const tokens = line.replace(/\s*\([^)]*\)/gu, "").split(" ");
    const readOnly = tokens.some((token) => token.startsWith("%R~"));
    const rules = tokens
      .filter((token) => !token.startsWith("~") && !token.startsWith("%"))
      .map((token) => (token === "resetpass" ? `resetpass >${password}` : token));
    const keys = keyPatterns.map((pattern) => `${readOnly ? "%R" : ""}~${pattern}`);
    return [...rules, ...keys, ...selectors].join(" ");
  });
}

/** The user names the file defines, in order. */
export async function aclUsers(): Promise<string[]> {
  const text = await readFile(ACL_FILE, "utf8");
  return text
    .split("\n")
    .filter((line) => line.startsWith("user "))
    .map((line) => line.split(" ")[1] ?? "");
}
