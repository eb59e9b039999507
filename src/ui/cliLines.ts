import type { ResolvedGroup } from "../core/resolveGroup.js";

/**
 * A word for a POSIX shell: single-quoted unless it is plainly safe, a quote inside written as
 * '\''. Names are arbitrary, so a copied line must run the command on exactly that name.
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/u.test(word)) return word;
  return `'${word.replace(/'/gu, "'\\''")}'`;
}

/**
 * `--name value`, or `--name=value` when the value starts with a dash: the CLI's parser
 * (node:util parseArgs) refuses `--group --all` as ambiguous, whatever the shell quoting.
 */
function option(name: string, value: string): string {
  return value.startsWith("-")
    ? `--${name}=${shellQuote(value)}`
    : `--${name} ${shellQuote(value)}`;
}

/** The operator commands one would run next for the group, ready to copy. */
export function cliLines(group: ResolvedGroup): string[] {
  const target = `${option("stream", group.stream)} ${option("group", group.group)}`;
  const reapIdle = group.reapConsumersIdleMs ?? 0;
  return [
    `stream-janitor dlq list ${target} --limit 20`,
    `stream-janitor dlq redrive ${target} --dry-run`,
    `stream-janitor dlq redrive ${target}`,
    `stream-janitor dlq purge ${target} --all --dry-run`,
    `stream-janitor consumers reap ${target} --idle-ms ${reapIdle > 0 ? reapIdle : 3_600_000} --dry-run`,
  ];
}
