import { Registry } from "prom-client";
import type { JanitorConfig } from "../core/configTypes.js";
import type { StatusReport } from "../core/groupStatus.js";
import { discoverGroups } from "../discovery/discoverGroups.js";
import { createLogger } from "../logging/createLogger.js";
import { createStatusMetrics } from "../metrics/statusMetrics.js";
import { connectRedis } from "../redis/connectRedis.js";
import { detectCapabilities } from "../redis/detectCapabilities.js";
import { endpointOf, explainRedisError } from "../redis/explainRedisError.js";
import { StatusSampler } from "../status/StatusSampler.js";

/** Samples the command takes when no janitor answers: the fewest that give a verdict, plus one. */
const LOCAL_SAMPLES = 3;

/** A status sample waits this long for one reply. */
const COMMAND_TIMEOUT_MS = 5000;

export type LocalStatus = { ok: true; report: StatusReport } | { ok: false; problem: string };

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * The group status without a janitor: LOCAL_SAMPLES samples of every configured (and
 * discovered) group spread over `overMs`, judged by the janitor's own sampler and rules. A
 * consumer counts as seen as the janitor judges it (a read attempt within status.intervalMs x
 * status.window: Redis measures that idle time, not the samples), so only the verdicts that
 * compare samples (STALL, STUCK, WARN, REWIND) look at a shorter window than the janitor's.
 */
export async function sampleStatusLocally(
  config: JanitorConfig,
  overMs: number,
  signal: AbortSignal,
): Promise<LocalStatus> {
  const redis = connectRedis(config.redis, {
    connectionName: "stream-janitor:status",
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    logger: createLogger("silent"),
    failFast: true,
  });
  const explain = (error: unknown): string =>
    explainRedisError(error, { url: config.redis.url, client: redis });
  try {
    let sampler: StatusSampler;
    try {
      const capabilities = await detectCapabilities(redis);
      sampler = new StatusSampler({
        redis,
        groups: await discoverGroups(redis, config),
        config,
        metrics: createStatusMetrics(new Registry()),
        pelScans: new Map(),
        logger: createLogger("silent"),
        instance: `stream-janitor status (pid ${process.pid})`,
        isLeader: () => false,
        fencingToken: () => null,
        writeEvent: () => undefined,
      });
      sampler.setCapabilities(capabilities);
    } catch (error) {
      return {
        ok: false,
        problem: `cannot sample Redis at ${endpointOf(config.redis.url)} itself: ${explain(error)}`,
      };
    }
    const intervalMs = Math.round(overMs / (LOCAL_SAMPLES - 1));
    for (let i = 0; i < LOCAL_SAMPLES && !signal.aborted; i += 1) {
      if (i > 0) await pause(intervalMs, signal);
      await sampler.sampleOnce();
    }
    const report = sampler.report();
    if (report.redis === "unreachable") {
      return {
        ok: false,
        problem: `Redis at ${endpointOf(config.redis.url)} stopped answering while sampled`,
      };
    }
    return {
      ok: true,
      report: { sampledBy: "command", ...report, sampling: { intervalMs, window: LOCAL_SAMPLES } },
    };
  } finally {
    redis.disconnect();
  }
}
