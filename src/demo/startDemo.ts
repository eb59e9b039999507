import { Redis } from "../redis/ioredis.js";
import type { Logger } from "pino";
import type { JanitorConfig } from "../core/configTypes.js";
import { readVersion } from "../commands/readVersion.js";
import { startDaemon } from "../daemon/startDaemon.js";
import { TeardownStack } from "../daemon/TeardownStack.js";
import { maskRedisUrl } from "../config/formatEffectiveConfig.js";
import { createLogger } from "../logging/createLogger.js";
import { AuditConsumer } from "./AuditConsumer.js";
import { DeadLetterWatcher } from "./DeadLetterWatcher.js";
import {
  chooseHttpPort,
  DEMO_AUDIT_GROUP,
  DEMO_DEAD_LETTER_STREAM,
  DEMO_GROUP,
  DEMO_LANES,
  DEMO_MAX_DELIVERIES,
  DEMO_MIN_IDLE_MS,
  DEMO_STREAM,
  demoConfig,
} from "./demoConfig.js";
import { GoodConsumer } from "./GoodConsumer.js";
import { janitorLogDestination } from "./janitorLog.js";
import { printDigest } from "./metricsDigest.js";
import { PoisonConsumer } from "./PoisonConsumer.js";
import { errorMessage, type Printer } from "./printer.js";
import { Producer } from "./Producer.js";
import { provideRedis, NoRedisForDemoError } from "./redisLauncher.js";
import { playScene } from "./scene.js";

const DIGEST_EVERY_MS = 10_000;

export interface RunningDemo {
  /** Stops actors, daemon, clients and the server the demo started, in that order. */
  stop(): Promise<void>;
}

type RedisHandle = Awaited<ReturnType<typeof provideRedis>>;
type Cast = Parameters<typeof playScene>[0];

/** A client of the demo's server named after its actor, saying each connection error once. */
function demoClient(redis: RedisHandle, printer: Printer, name: string): Redis {
  const client = new Redis(redis.url, {
    protocol: 2,
    connectionName: `stream-janitor-demo:${name}`,
    maxRetriesPerRequest: 1,
  });
  let lastError = "";
  client.on("error", (error: Error) => {
    // ioredis repeats a connection error on every reconnect attempt; say it once.
    if (error.message !== lastError) printer.line(name, `redis error: ${error.message}`);
    lastError = error.message;
  });
  return client;
}

/** The server (started, or found by the environment), with its teardown. */
async function bringUpRedis(
  env: NodeJS.ProcessEnv,
  printer: Printer,
  teardown: TeardownStack,
): Promise<RedisHandle> {
  const redis = await provideRedis(env);
  teardown.push("redis-server", async () => {
    await redis.stop();
    if (redis.owned) {
      printer.line(
        "redis",
        `stopped redis-server (pid ${String(redis.pid)}), removed its directory`,
      );
    }
  });
  printer.line("redis", redis.description);
  return redis;
}

/** The daemon in this process, or the one at `janitorUrl`; returns its HTTP address. */
async function bringUpJanitor(
  config: JanitorConfig,
  start: { logger: Logger; onFatal: (error: unknown) => void; janitorUrl: string | undefined },
  printer: Printer,
  teardown: TeardownStack,
): Promise<string> {
  let httpUrl: string;
  if (start.janitorUrl === undefined) {
    const daemon = await startDaemon(config, {
      logger: start.logger,
      version: readVersion(),
      onFatal: start.onFatal,
    });
    teardown.push("daemon", () => daemon.stop());
    httpUrl = daemon.httpUrl;
    printer.line("demo", `stream-janitor runs in this process: ${janitorSettings(config)}`);
  } else {
    httpUrl = start.janitorUrl;
    printer.line("demo", `stream-janitor runs at ${httpUrl} and ${janitorSettings(config)}`);
  }
  printer.line("demo", `Prometheus metrics at ${httpUrl}/metrics; try:`);
  printer.detail(`curl -s ${httpUrl}/metrics | grep '^stream_janitor_'`);
  return httpUrl;
}

/** The actors, each on its own connection, with their teardowns. */
function castActors(
  connect: (name: string) => Redis,
  admin: Redis,
  printer: Printer,
  teardown: TeardownStack,
): Cast {
  const cast = {
    producer: new Producer("producer", connect("producer"), printer),
    goodConsumer: new GoodConsumer("consumer-1", connect("consumer-1"), printer),
    poisonConsumer: new PoisonConsumer(connect("consumer-3"), printer),
    deadLetters: new DeadLetterWatcher(connect("dead-letters"), printer),
    crashingRedis: connect("consumer-2"),
    auditor: new AuditConsumer("auditor-2", connect("auditor-2"), printer),
    crashingAuditorRedis: connect("auditor-1"),
    admin,
  };
  // The producer stops first, so nothing new arrives unread; then the readers, together, since
  // each may be waiting out a short blocking read.
  teardown.push("actors", async () => {
    await cast.producer.stop();
    const readers = [cast.goodConsumer, cast.poisonConsumer, cast.auditor, cast.deadLetters];
    await Promise.all(readers.map((actor) => actor.stop()));
  });
  // consumer-2 normally closes its own connection when it "crashes"; this covers a stop before.
  teardown.push("consumer-2", () => cast.crashingRedis.disconnect());
  teardown.push("auditor-1", () => cast.crashingAuditorRedis.disconnect());
  return cast;
}

/** The digests every DIGEST_EVERY_MS, then the scene, with their teardowns. */
function startShow(cast: Cast, httpUrl: string, printer: Printer, teardown: TeardownStack): void {
  const digests = setInterval(() => {
    void printDigest(printer, httpUrl, cast.admin, "digest").catch(() => undefined);
  }, DIGEST_EVERY_MS);
  teardown.push("digests", () => clearInterval(digests));
  const sceneController = new AbortController();
  const scene = playScene(cast, printer, sceneController.signal).catch((error: unknown) => {
    if (!sceneController.signal.aborted)
      printer.line("demo", `scene failed: ${errorMessage(error)}`);
  });
  teardown.push("scene", async () => {
    sceneController.abort();
    await scene;
  });
}

/**
 * Brings the demo up: Redis, the stream and group, the daemon (in-process, exactly as
 * `stream-janitor run` would start it, unless `janitorUrl` names one running elsewhere), the
 * metrics digest and the actors. Every piece registers its teardown as it comes up, so a failure
 * half-way leaves nothing behind either.
 */
export async function startDemo(
  printer: Printer,
  env: NodeJS.ProcessEnv,
  onFatal: (error: unknown) => void,
  janitorUrl?: string,
): Promise<RunningDemo> {
  const logger = createLogger("info", janitorLogDestination(printer));
  const teardown = new TeardownStack(logger);
  try {
    const redis = await bringUpRedis(env, printer, teardown);
    const connect = (name: string): Redis => demoClient(redis, printer, name);
    const admin = connect("admin");
    teardown.push("admin", () => admin.quit());
    try {
      await prepareStream(admin, printer);
    } catch (error) {
      // The first command is where an unreachable or refusing server shows: say so plainly.
      throw new NoRedisForDemoError(
        `cannot use the Redis at ${maskRedisUrl(redis.url)}: ${errorMessage(error)}`,
      );
    }
    const config = demoConfig(redis.url, await chooseHttpPort());
    const httpUrl = await bringUpJanitor(
      config,
      { logger, onFatal, janitorUrl },
      printer,
      teardown,
    );
    // Stopped after the actors: it shows where they left things.
    teardown.push("final digest", () => printDigest(printer, httpUrl, admin, "final digest"));
    startShow(castActors(connect, admin, printer, teardown), httpUrl, printer, teardown);
    return { stop: () => teardown.run() };
  } catch (error) {
    await teardown.run();
    throw error;
  }
}

function janitorSettings(config: JanitorConfig): string {
  return (
    `sweeps every ${config.sweep.intervalMs} ms, claims entries idle >= ${DEMO_MIN_IDLE_MS} ms, ` +
    `requeues them into each group's retry lane, dead-letters at ${DEMO_MAX_DELIVERIES} deliveries into ${DEMO_DEAD_LETTER_STREAM}`
  );
}

/**
 * A fresh stream, its two groups and their retry lanes; only the demo's own keys are deleted,
 * nothing is flushed. The lanes are created here, as the README advises, because the consumers
 * read them before the janitor's first sweep would create them (XREADGROUP on a missing lane
 * fails with NOGROUP); the janitor accepts the groups it finds.
 */
async function prepareStream(admin: Redis, printer: Printer): Promise<void> {
  const lanes = Object.entries(DEMO_LANES);
  const removed = await admin.del(
    DEMO_STREAM,
    DEMO_DEAD_LETTER_STREAM,
    ...lanes.map(([, lane]) => lane),
  );
  if (removed > 0) {
    printer.line(
      "demo",
      `deleted ${DEMO_STREAM}, its retry lanes and ${DEMO_DEAD_LETTER_STREAM} from an earlier run`,
    );
  }
  for (const group of [DEMO_GROUP, DEMO_AUDIT_GROUP]) {
    await admin.call("XGROUP", "CREATE", DEMO_STREAM, group, "$", "MKSTREAM");
  }
  for (const [group, lane] of lanes) {
    await admin.call("XGROUP", "CREATE", lane, group, "0", "MKSTREAM");
  }
  printer.line(
    "demo",
    `created stream ${DEMO_STREAM} with consumer groups ${DEMO_GROUP} and ${DEMO_AUDIT_GROUP}; ` +
      `requeued copies in ${DEMO_STREAM} would reach both, so each has a retry lane of its own ` +
      `(retryLane: true): ${lanes.map(([, lane]) => lane).join(" and ")}`,
  );
}
