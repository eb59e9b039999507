import { ConfigError, type ConfigProblems } from "./ConfigError.js";
import { defaultDeadLetterStream } from "../core/resolveGroup.js";
import { leaseTimingProblem } from "../core/leaseTimingRule.js";
import type { DiscoverConfig, GroupConfig, JanitorConfig } from "../core/configTypes.js";
import { userInfoDecodes } from "./configLeaf.js";

/**
 * The rules that span several keys, which neither convict nor a per-key check can express.
 * Sections that already had a problem are skipped: their values are partly defaults.
 */
export function checkCrossKeyRules(
  config: Pick<JanitorConfig, "lease" | "groups" | "redis"> &
    Partial<Pick<JanitorConfig, "discover">>,
  problems: ConfigProblems,
  skipSections: ReadonlySet<string> = new Set(),
): void {
  if (!skipSections.has("lease")) problems.check(() => checkLeaseRule(config.lease));
  if (!skipSections.has("redis") && URL.canParse(config.redis.url)) {
    if (!userInfoDecodes(config.redis.url)) {
      const expected =
        "a URL whose user name and password are percent-encoded (a % is written %25)";
      problems.add(new ConfigError("redis.url", config.redis.url, expected));
    }
  }
  if (!skipSections.has("lease")) problems.check(() => checkLeaseWaitRule(config.lease));
  checkGroupRules(config.groups, problems);
  checkDiscoverRules(config.discover ?? [], problems);
}

/** The dead-letter loop rule of groups, for what a pattern's settings alone can tell. */
function checkDiscoverRules(entries: readonly DiscoverConfig[], problems: ConfigProblems): void {
  entries.forEach((entry, index) => {
    problems.check(() => checkRetryLaneAction(entry, `discover[${index}]`));
    const { requeueStream, deadLetterStream } = entry;
    if (requeueStream !== "" && requeueStream === deadLetterStream) {
      const expected =
        "a stream other than the pattern's requeueStream (dead letters would be delivered again)";
      problems.add(
        new ConfigError(`discover[${index}].deadLetterStream`, deadLetterStream, expected),
      );
    }
  });
}

/** A retry lane holds requeued copies: only the requeue action makes any. */
function checkRetryLaneAction(
  settings: Pick<GroupConfig, "action" | "retryLane">,
  path: string,
): void {
  if (settings.retryLane === true && settings.action !== "requeue") {
    const expected = `false with action ${settings.action} (a retry lane is for action requeue)`;
    throw new ConfigError(`${path}.retryLane`, true, expected);
  }
}

/** The lease timing rule (the Lease checks the same), blaming a key by its full path. */
function checkLeaseRule(lease: JanitorConfig["lease"]): void {
  const problem = leaseTimingProblem(lease, (key) => `lease.${key}`);
  if (problem !== undefined) {
    throw new ConfigError(`lease.${problem.key}`, problem.value, problem.expected);
  }
}

/** The WAIT runs on the lease connection, whose commands time out after retryPeriodMs. */
function checkLeaseWaitRule(lease: JanitorConfig["lease"]): void {
  const { waitReplicas = 0, waitTimeoutMs = 0, retryPeriodMs } = lease;
  if (waitReplicas > 0 && waitTimeoutMs >= retryPeriodMs) {
    const expected = `less than lease.retryPeriodMs (${retryPeriodMs}) when lease.waitReplicas > 0`;
    throw new ConfigError("lease.waitTimeoutMs", waitTimeoutMs, expected);
  }
}

function checkGroupRules(groups: readonly GroupConfig[], problems: ConfigProblems): void {
  const seen = new Map<string, number>();
  groups.forEach((group, index) => {
    const path = `groups[${index}]`;
    const pair = JSON.stringify([group.stream, group.group]);
    const earlier = seen.get(pair);
    if (earlier !== undefined) {
      const expected = `a stream/group pair not configured already (groups[${earlier}] has it)`;
      problems.add(new ConfigError(path, { stream: group.stream, group: group.group }, expected));
      return;
    }
    seen.set(pair, index);
    problems.check(() => checkRetryLaneAction(group, path));
    // Dead letters written where the group (or its requeue target) reads would come back.
    const { deadLetterStream, stream, requeueStream, action } = group;
    const feedsBack =
      deadLetterStream === stream || (action === "requeue" && deadLetterStream === requeueStream);
    if (deadLetterStream !== "" && feedsBack) {
      const expected = `a stream other than the source stream and the requeue stream (dead letters would be delivered again)`;
      problems.add(new ConfigError(`${path}.deadLetterStream`, deadLetterStream, expected));
      return;
    }
    // The same loop the other way round: requeued copies landing among the dead letters.
    const deadLetters =
      deadLetterStream === "" ? defaultDeadLetterStream(stream) : deadLetterStream;
    if (requeueStream !== "" && requeueStream === deadLetters) {
      const expected = `a stream other than the group's dead-letter stream (${deadLetters})`;
      problems.add(new ConfigError(`${path}.requeueStream`, requeueStream, expected));
    }
  });
}
