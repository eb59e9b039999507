import { DEMO_USAGE, DemoUsageError, parseDemoArgs, type DemoArgs } from "./demoArgs.js";
import { errorMessage, Printer } from "./printer.js";
import { RedisUnavailableError } from "./redisLauncher.js";
import { startDemo } from "./startDemo.js";

/** A stop that hangs (a wedged Redis) must not keep the terminal hostage. */
const STOP_TIMEOUT_MS = 15_000;

/** `npm run demo`: see demoArgs.ts for the options and startDemo.ts for what runs. */
async function main(args: DemoArgs): Promise<number> {
  const printer = new Printer();
  let requestStop: (reason: string, code: number) => void = () => undefined;
  const stopRequested = new Promise<{ reason: string; code: number }>((resolve) => {
    requestStop = (reason, code) => resolve({ reason, code });
  });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    // A second Ctrl-C means "now": the exit hook still kills the redis-server we started.
    if (signals > 1) process.exit(130);
    requestStop(signal, 0);
  };
  // `npm run demo | head` closes the pipe early: stop cleanly rather than die of EPIPE.
  process.stdout.on("error", () => requestStop("output closed", 0));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  if (args.durationMs !== undefined) {
    setTimeout(() => requestStop(`the story ran ${args.durationMs} ms`, 0), args.durationMs);
  }

  let demo;
  try {
    demo = await startDemo(printer, process.env, (error) => {
      printer.line("demo", `the janitor cannot continue: ${errorMessage(error)}`);
      requestStop("fatal error", 1);
    });
  } catch (error) {
    // Missing Redis is an expected situation with its own advice; anything else gets a stack.
    const detail = error instanceof RedisUnavailableError ? error.message : errorDetail(error);
    process.stderr.write(`demo: ${detail}\n`);
    return 1;
  }
  printer.line(
    "demo",
    args.durationMs === undefined
      ? "running; press Ctrl-C to stop"
      : `running for ${args.durationMs / 1000} s, then a final digest (Ctrl-C stops sooner)`,
  );
  const { reason, code } = await stopRequested;
  printer.line("demo", `stopping (${reason})`);
  const timeout = setTimeout(() => {
    printer.line("demo", `could not stop within ${STOP_TIMEOUT_MS} ms; exiting anyway`);
    process.exit(1);
  }, STOP_TIMEOUT_MS);
  await demo.stop();
  clearTimeout(timeout);
  printer.line("demo", "stopped cleanly");
  return code;
}

function errorDetail(error: unknown): string {
  return error instanceof Error && error.stack !== undefined ? error.stack : errorMessage(error);
}

let args: DemoArgs;
try {
  args = parseDemoArgs(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof DemoUsageError)) throw error;
  process.stderr.write(`demo: ${error.message}\n\n${DEMO_USAGE}\n`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(`${DEMO_USAGE}\n`);
  process.exit(0);
}
// Explicit exit: a straggling handle (a keep-alive socket, a timer) must not keep the demo alive.
process.exit(await main(args));
