import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_DEMO_DURATION_MS, parseDemoArgs } from "../../src/demo/demoArgs.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const entry = fileURLToPath(new URL("../../dist/demo/runDemo.js", import.meta.url));

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM would mean it exists under another user: still running.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

let child: ChildProcess | undefined;

// `npm run demo` runs the compiled demo, so the test does too (test/globalSetup.ts builds it).
afterAll(() => {
  // Only after a failed assertion or a timeout is the demo still running.
  if (child?.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

describe("npm run demo", () => {
  it("tells the whole story, then stops by itself and leaves nothing running", async () => {
    expect(existsSync(entry)).toBe(true);
    const env = { ...process.env };
    // The throwaway server is what is under test, not whichever Redis the caller points at.
    delete env.STREAM_JANITOR_REDIS_URL;
    const demo = spawn(process.execPath, [entry, "--duration-ms", "8000"], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = demo;
    let output = "";
    demo.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    demo.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(demo, "close")) as [number | null];

    expect(code, output).toBe(0);
    // The janitor's own reports, turned into plain lines.
    expect(output).toMatch(
      /janitor +swept demo:orders\/billing: claimed \d+ entr\w+ .*requeued [1-9]/u,
    );
    expect(output).toMatch(/janitor +found [1-9]\d* ghosts? in demo:orders\/billing/u);
    expect(output).toMatch(/dead-lettered [1-9]/u);
    // ...and their effects, as the actors and the dead-letter stream see them.
    expect(output).toMatch(/consumer-2 +crashed holding 5 orders/u);
    expect(output).toMatch(/poison order #\d+ delivered 3 times/u);
    expect(output).toMatch(/received order #\d+: reason max-deliveries, delivered 3 times/u);
    expect(output).toMatch(/consumer-1 +got the requeued copy of order #\d+/u);
    expect(output).toMatch(/http:\/\/127\.0\.0\.1:\d+\/metrics/u);
    expect(output).not.toMatch(/\{"level"/u); // no raw JSON log lines
    expect(output).toMatch(/stopped cleanly/u);
    expect(output).toMatch(/final digest/u);
    // A second group on the stream, on a retry lane of its own (retryLane: true): its consumer
    // reads demo:orders and the lane in one XREADGROUP, dies mid-batch, and the janitor's copies
    // come back through the lane, never through demo:orders.
    expect(output).toMatch(/auditor-1 +crashed after recording 3 of 5 orders/u);
    expect(output).toMatch(
      /janitor +swept demo:orders\/audit: claimed \d+ entr\w+ .*requeued [1-9]\d* into \{demo:orders\}:audit:retry/u,
    );
    expect(output).toMatch(
      /auditor-2 +got order #\d+ back through the retry lane \{demo:orders\}:audit:retry \(first id [\d-]+, delivery 2\)/u,
    );
    // Each group gets one copy of each stuck order: billing's consumer never sees audit's copies.
    const copies = (pattern: RegExp): string[] =>
      [...output.matchAll(pattern)].map((match) => match[1] ?? "");
    const billingCopies = copies(/consumer-1 +got the requeued copy of order #(\d+)/gu);
    const auditCopies = copies(/auditor-2 +got order #(\d+) back through the retry lane/gu);
    expect(new Set(billingCopies).size, output).toBe(billingCopies.length);
    expect(new Set(auditCopies).size, output).toBe(auditCopies.length);
    expect(output).toMatch(
      /consumer-1 +got the requeued copy of order #\d+ from \{demo:orders\}:billing:retry/u,
    );
    expect(output).toMatch(
      /retry lanes \(requeued copies\): \{demo:orders\}:billing:retry [1-9]\d*\*? entries, \{demo:orders\}:audit:retry [1-9]\d*\*? entries; group audit: claimed [1-9]\d*, requeued [1-9]/u,
    );

    const server = /redis-server \(pid (\d+)\) on port \d+, data in (\S+),/u.exec(output);
    expect(server, output).not.toBeNull();
    expect(isRunning(Number(server?.[1]))).toBe(false);
    expect(existsSync(server?.[2] ?? "")).toBe(false);
  });
});

describe("demo arguments", () => {
  it("ends by itself after the default duration; --keep-running runs until Ctrl-C", () => {
    expect(parseDemoArgs([]).durationMs).toBe(DEFAULT_DEMO_DURATION_MS);
    expect(parseDemoArgs(["--duration-ms", "8000"]).durationMs).toBe(8000);
    expect(parseDemoArgs(["--keep-running"]).durationMs).toBeUndefined();
    expect(() => parseDemoArgs(["--keep-running", "--duration-ms", "5"])).toThrow(/exclude/u);
  });
});
