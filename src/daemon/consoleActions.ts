import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { JanitorConfig } from "../core/configTypes.js";
import { createMetrics } from "../metrics/createMetrics.js";
import { METRIC_TABLE } from "../metrics/metricTable.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { registerScripts, type ScriptedRedis } from "../scripts/scriptedRedis.js";
import { ActionRefusals } from "../ui/ActionRefusals.js";
import type { ConsoleParts } from "../ui/createConsole.js";
import { CsrfTokens } from "../ui/CsrfTokens.js";
import type { UiActionRunner } from "../ui/UiActions.js";

/** What runs the actions: the operator commands' code, which the daemon sits below. */
export type UiActionRunnerFactory = (redis: ScriptedRedis) => UiActionRunner;

/** A redrive page is one short script; the bound is the CLI's own per command. */
const ACTIONS_COMMAND_TIMEOUT_MS = 10_000;

/**
 * The console's actions when http.ui.actions is on (undefined otherwise): on a connection of
 * their own (an action never queues behind a scrape), with a CSRF secret of this process and the
 * refusals counted in stream_janitor_ui_actions_refused_total.
 */
export function createConsoleActions(
  config: JanitorConfig,
  parts: {
    runner: UiActionRunnerFactory | undefined;
    connect: (name: string, commandTimeoutMs: number) => RedisClient;
    registry: Registry;
    logger: Logger;
  },
): ConsoleParts["actions"] {
  if (config.http.ui.actions !== true) return undefined;
  if (parts.runner === undefined)
    throw new Error("http.ui.actions is on but no action runner was given");
  const redis = registerScripts(parts.connect("actions", ACTIONS_COMMAND_TIMEOUT_MS));
  const logger = parts.logger.child({ component: "ui" });
  const { refused } = createMetrics(parts.registry, METRIC_TABLE.uiActions);
  return {
    runner: parts.runner(redis),
    csrf: new CsrfTokens(),
    refusals: new ActionRefusals(refused, logger),
    redis,
    events: config.events,
    logger,
  };
}
