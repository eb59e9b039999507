import { join } from "node:path";
import { parseCommand, UsageError, type ParsedCommand } from "./options.js";
import { summary } from "./report.js";
import { PROJECT_ROOT } from "./root.js";
import { runChaos, type ChaosOptions } from "./runChaos.js";
import { caught, plantDefect, PLANTED_DEFECTS } from "./selfTest.js";

const CLI = join(PROJECT_ROOT, "dist", "cli.js");
/** Bodies from 10 B to 64 KiB in runs up to a minute (CI's), to 1 MiB in longer ones. */
const SHORT_RUN_BODY_BYTES = 64 * 1024;
const LONG_RUN_BODY_BYTES = 1024 * 1024;
const SELF_TEST_MS = 20_000;

function chaosOptions(
  command: ParsedCommand,
  cli: string,
  outDir: string,
  durationMs: number,
): ChaosOptions {
  return {
    seed: command.seed,
    topology: command.topology,
    durationMs,
    outDir,
    cli,
    maxBodyBytes: durationMs > 60_000 ? LONG_RUN_BODY_BYTES : SHORT_RUN_BODY_BYTES,
    quietMs: 30_000,
    minEntries: 0,
  };
}

/** The unchanged build passes a short schedule, and every planted defect is caught. */
async function selfTest(command: ParsedCommand): Promise<number> {
  let failures = 0;
  const unknown = command.defects.filter((name) => !PLANTED_DEFECTS.some((d) => d.name === name));
  if (unknown.length > 0) {
    const names = PLANTED_DEFECTS.map((d) => d.name).join(", ");
    throw new UsageError(`--defect ${unknown.join(", ")}: expected one of ${names}`);
  }
  if (command.defects.length === 0) {
    const clean = await runChaos(
      chaosOptions(command, CLI, join(command.outDir, "unchanged"), SELF_TEST_MS),
    );
    process.stdout.write(
      `self-test unchanged build: ${clean.ok ? "passes" : "FAILS"}\n${summary(clean)}\n`,
    );
    if (!clean.ok) failures += 1;
  }
  const chosen = PLANTED_DEFECTS.filter(
    (d) => command.defects.length === 0 || command.defects.includes(d.name),
  );
  for (const defect of chosen) {
    const planted = await plantDefect(defect);
    try {
      const out = join(command.outDir, defect.name);
      const report = await runChaos(chaosOptions(command, planted.cli, out, SELF_TEST_MS));
      const invariant = caught(defect, report);
      process.stdout.write(
        `self-test ${defect.name}: ${invariant === undefined ? "NOT CAUGHT" : `caught by ${invariant}`}\n${summary(report)}\n`,
      );
      if (invariant === undefined) failures += 1;
    } finally {
      await planted.remove();
    }
  }
  return failures === 0 ? 0 : 1;
}

async function main(argv: readonly string[]): Promise<number> {
  let command: ParsedCommand;
  try {
    command = parseCommand(argv);
  } catch (error) {
    process.stderr.write(`chaos: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  if (command.selfTest) return selfTest(command);
  const report = await runChaos(chaosOptions(command, CLI, command.outDir, command.durationMs));
  process.stdout.write(`${summary(report)}\nhistory and report.json in ${command.outDir}\n`);
  return report.ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`chaos: ${error instanceof UsageError ? error.message : String(error)}\n`);
    process.exit(error instanceof UsageError ? 2 : 3);
  },
);
