import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import { describe, expect, it } from "vitest";
import { OPERATOR_COMMANDS } from "../../src/commands/operator/runOperatorCommand.js";
import { defaultGroupConfig } from "../../src/config/defaultConfig.js";
import { resolveGroup } from "../../src/core/resolveGroup.js";
import { cliLines } from "../../src/ui/cliLines.js";

/** The words a POSIX shell makes of a copied line: the real /bin/sh splits and unquotes it. */
function shellWords(line: string): string[] {
  const out = execFileSync("/bin/sh", ["-c", `printf '%s\\0' ${line}`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
}

/** What the CLI's own argument parser makes of those words (as runOperatorCommand parses). */
function parsedBy(argv: readonly string[]): Record<string, unknown> {
  const command = OPERATOR_COMMANDS.find((c) => c.words.every((word, i) => argv[i] === word));
  if (command === undefined) throw new Error(`no operator command in ${argv.join(" ")}`);
  const { values } = parseArgs({
    args: argv.slice(command.words.length),
    options: command.options,
    allowPositionals: false,
    strict: true,
  });
  command.validate?.(values as Record<string, string | boolean | string[] | undefined>);
  return values;
}

describe("the group page's CLI lines, run through the shell and the CLI's parser", () => {
  const names = [
    "--all",
    "-x",
    "--",
    "-",
    "--group",
    "a b",
    "it's",
    'say "hi"',
    "$(rm -rf /)",
    "tenant:1:events",
  ];

  for (const name of names) {
    it(`targets exactly stream and group ${JSON.stringify(name)}`, () => {
      const group = resolveGroup(defaultGroupConfig(name, name));
      for (const line of cliLines(group)) {
        const [program, ...argv] = shellWords(line);
        expect(program).toBe("stream-janitor");
        const values = parsedBy(argv);
        expect(values.stream, line).toBe(name);
        expect(values.group, line).toBe(name);
      }
    });
  }

  it("a stream that starts with a dash too", () => {
    const group = resolveGroup(defaultGroupConfig("-orders", "--dry-run"));
    for (const line of cliLines(group)) {
      const values = parsedBy(shellWords(line).slice(1));
      expect(values).toMatchObject({ stream: "-orders", group: "--dry-run" });
    }
  });
});
