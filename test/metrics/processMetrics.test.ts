import { afterEach, describe, expect, it } from "vitest";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("standard process metrics", () => {
  it("/metrics carries prom-client's process_* and nodejs_* defaults, unprefixed, with samples", async () => {
    const prefix = uniquePrefix("process-metrics");
    const file = await writeConfigFile(testConfig(fixture.server.url, prefix, [{}]));
    cleanups.push(file.remove);
    const daemon = await DaemonProcess.start(file.path);
    cleanups.push(() => daemon.kill());

    const rss = await daemon.metric("process_resident_memory_bytes");
    expect(rss).toBeGreaterThan(10 * 1024 * 1024);
    expect(await daemon.metric("process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(await daemon.metric("nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
    const heap = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
    expect(heap).toMatch(/^nodejs_heap_size_used_bytes \d+/mu);
    expect(heap).toMatch(/^# TYPE nodejs_gc_duration_seconds histogram$/mu);
    // The project's own families are still there, next to them.
    expect(heap).toMatch(/^stream_janitor_build_info\{version="[^"]+"\} 1$/mu);
  });
});
