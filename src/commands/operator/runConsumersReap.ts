import { janitorConsumerName } from "../../core/janitorConsumerName.js";
import { reapConsumers } from "../../maintenance/reapConsumers.js";
import { EXIT } from "../exitCodes.js";
import { existingGroup } from "./existingGroup.js";
import {
  durationOption,
  requiredString,
  writeJson,
  type OperatorSession,
} from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";
import { writeOperatorEvent } from "./writeOperatorEvent.js";

/**
 * Before Redis 7.2 only `idle` says when a consumer was last seen, and an XREADGROUP that blocks
 * or returns nothing does not refresh it: a live consumer waiting on a drained stream looks idle.
 */
const BEFORE_INACTIVE =
  "warning: this server (before Redis 7.2) has no `inactive` in XINFO CONSUMERS: a consumer blocked in XREADGROUP on an empty stream looks idle here, and is listed with the idle ones (deleted, it comes back at its next read, owning nothing)";

/** `consumers reap`: what consumersReapCommand runs, loaded only when the command is run. */
export async function runConsumersReap(
  values: OptionValues,
  session: OperatorSession,
): Promise<number> {
  const stream = requiredString(values, "stream");
  const group = requiredString(values, "group");
  await existingGroup(session, stream, group);
  const idleMs = durationOption(values, "idle", "idle-ms") ?? 0;
  const summary = await reapConsumers(session.redis, {
    stream,
    group,
    idleMs,
    janitorConsumer: janitorConsumerName(session.config),
    dryRun: values["dry-run"] === true,
  });
  if (!summary.dryRun && summary.reaped.length > 0) {
    const consumers = summary.reaped;
    await writeOperatorEvent(session, {
      type: "consumers-reaped",
      stream,
      group,
      count: consumers.length,
      ids: consumers,
      detail: { consumers, idleMs },
    });
  }
  // With the result it qualifies, on stdout: stderr stays for failures.
  const warning = !summary.usedInactive && summary.reaped.length > 0 ? BEFORE_INACTIVE : undefined;
  if (values.json === true) writeJson(session, { ...summary, ...(warning && { warning }) });
  else {
    const verb = summary.dryRun ? "would reap" : "reaped";
    const names = summary.reaped.length === 0 ? "" : `: ${summary.reaped.join(", ")}`;
    session.stdout.write(
      `${stream}/${group}: ${verb} ${summary.reaped.length} consumer(s)${names}; ${summary.keptWithPending} kept with pending entries\n`,
    );
    if (warning !== undefined) session.stdout.write(`${warning}\n`);
  }
  return EXIT.ok;
}
