import type { Redis } from "ioredis";
import type { DiscoverConfig, JanitorConfig } from "../core/configTypes.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { runPipeline, type Command } from "../redis/pipeline/runPipeline.js";
import { parseXinfoGroupNames } from "../redis/replies.js";
import { resolveGroup, type ResolvedGroup } from "../core/resolveGroup.js";
import { compileGlob } from "./globMatch.js";
import { scanNodesOf, type ScanNodes } from "./scanNodes.js";
import { withoutRoleCollisions, type RefusedGroup } from "./roleCollisions.js";

export type DiscoveryInput = Pick<JanitorConfig, "groups" | "discover" | "discovery"> &
  Partial<Pick<JanitorConfig, "events" | "lease">>;

export interface DiscoveryScan {
  /** Groups found by the patterns, after exclusions, overrides and the cap, by stream/group name. */
  discovered: ResolvedGroup[];
  /** Per pattern (its `match`): groups found but left out by discovery.maxGroups. */
  overCap: Map<string, number>;
  /** Keys walked by SCAN (streams matching a pattern) and XINFO GROUPS calls made. */
  streamsMatched: number;
  /** Groups found before the cap (listed pairs and excluded streams already left out). */
  candidates: number;
  /** Groups left out because one of their keys would take another key's role. */
  refused: RefusedGroup[];
}

/**
 * SCAN COUNT: how many hash-table buckets one call walks. Each call takes well under a
 * millisecond of Redis time, so a scan never blocks the server; a keyspace of N keys takes about
 * N / 1000 round trips per pattern and node.
 */
const SCAN_COUNT = 1000;
/** XINFO GROUPS replies per pipeline: bounded, so one flush never holds thousands of replies. */
const XINFO_CHUNK = 500;

interface Match {
  stream: string;
  /** The first pattern (lowest index) that matched the stream. */
  patternIndex: number;
  node: Redis;
}

async function scanStreams(node: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = (await node.call(
      "SCAN",
      cursor,
      "MATCH",
      pattern,
      "COUNT",
      SCAN_COUNT,
      "TYPE",
      "stream",
    )) as [string, string[]];
    cursor = next;
    found.push(...keys);
  } while (cursor !== "0");
  return found;
}

/**
 * A Cluster node answers MOVED or ASK for a key whose slot is migrating, or moved since the SCAN
 * (an importing node holds keys it does not serve yet): the key exists, elsewhere.
 */
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN)\b/u;

/**
 * XINFO GROUPS of each match, pipelined per node; a stream deleted since the SCAN has none. A
 * redirected one is asked again through `follow` (the Cluster client, which follows MOVED and
 * ASK), so a slot migration never makes a stream's groups vanish for one scan.
 */
async function readGroups(
  matches: readonly Match[],
  follow: RedisClient | undefined,
): Promise<Map<string, string[]>> {
  const groups = new Map<string, string[]>();
  for (let start = 0; start < matches.length; start += XINFO_CHUNK) {
    const chunk = matches.slice(start, start + XINFO_CHUNK);
    const byNode = new Map<Redis, Match[]>();
    for (const match of chunk) byNode.set(match.node, [...(byNode.get(match.node) ?? []), match]);
    await Promise.all(
      [...byNode].map(async ([node, nodeMatches]) => {
        const commands = nodeMatches.map(({ stream }): Command => ["XINFO", "GROUPS", stream]);
        // No bound of its own: the connection's command timeout applies to each reply.
        const replies = await runPipeline(node, commands);
        const redirected: string[] = [];
        nodeMatches.forEach(({ stream }, index) => {
          const { error, value } = replies[index] ?? { value: [] };
          if (error !== undefined && follow !== undefined && REDIRECTED.test(error.message)) {
            redirected.push(stream);
            return;
          }
          // "no such key": deleted between SCAN and XINFO. WRONGTYPE: recreated as another type.
          groups.set(stream, error === undefined ? parseXinfoGroupNames(value) : []);
        });
        for (const stream of redirected) {
          // A failure here fails the scan: the groups found before stay rather than vanish.
          const reply = await follow?.call("XINFO", "GROUPS", stream).catch((error: unknown) => {
            if (error instanceof Error && /no such key|WRONGTYPE/u.test(error.message)) return [];
            throw error;
          });
          groups.set(stream, parseXinfoGroupNames(reply));
        }
      }),
    );
  }
  return groups;
}

/** Streams the janitor writes to: never sources, or it would sweep its own output. */
function outputStreams(groups: readonly ResolvedGroup[]): Set<string> {
  const outputs = new Set<string>();
  for (const group of groups) {
    outputs.add(group.deadLetterStream);
    if (group.requeueStream !== group.stream) outputs.add(group.requeueStream);
  }
  return outputs;
}

/**
 * A discovered group gets every setting of its pattern: the pattern is a GroupConfig without
 * stream and group, so a setting added to groups later reaches discovered groups too.
 */
function resolveDiscovered(entry: DiscoverConfig, stream: string, group: string): ResolvedGroup {
  // A copy without the two, not delete: after a delete, every group's object gets a hidden
  // class of its own (descriptors and enum caches per group: megabytes at 10,000 groups).
  const settings = Object.fromEntries(
    Object.entries(entry).filter(([key]) => key !== "match" && key !== "groups"),
  ) as Omit<DiscoverConfig, "match" | "groups">;
  return resolveGroup({ ...settings, stream, group });
}

const byName = (a: ResolvedGroup, b: ResolvedGroup): number =>
  a.stream < b.stream
    ? -1
    : a.stream > b.stream
      ? 1
      : a.group < b.group
        ? -1
        : a.group > b.group
          ? 1
          : 0;

/**
 * One scan of every pattern on every node: `SCAN ... MATCH ... TYPE stream` with a bounded
 * COUNT, then `XINFO GROUPS` per match, group names filtered by glob here. Read-only. `follow`:
 * the client that follows Cluster redirections, for streams whose node redirected the XINFO.
 */
export async function scanDiscoverPatterns(
  nodes: ScanNodes,
  config: DiscoveryInput,
  follow?: RedisClient,
): Promise<DiscoveryScan> {
  const scan: DiscoveryScan = {
    discovered: [],
    overCap: new Map(),
    streamsMatched: 0,
    candidates: 0,
    refused: [],
  };
  if (config.discover.length === 0) return scan;
  const matches = new Map<string, Match>();
  for (const node of await nodes()) {
    for (const [patternIndex, entry] of config.discover.entries()) {
      for (const stream of await scanStreams(node, entry.match)) {
        if (!matches.has(stream)) matches.set(stream, { stream, patternIndex, node });
      }
    }
  }
  scan.streamsMatched = matches.size;
  const groupsByStream = await readGroups([...matches.values()], follow);
  const groupMatchers = config.discover.map((entry) => compileGlob(entry.groups));

  const listed = config.groups.map(resolveGroup);
  const listedIds = new Set(listed.map((group) => group.id));
  const candidates: ResolvedGroup[] = [];
  const patternOf = new Map<string, DiscoverConfig>();
  for (const { stream, patternIndex } of matches.values()) {
    const entry = config.discover[patternIndex] as DiscoverConfig;
    const matcher = groupMatchers[patternIndex] as (name: string) => boolean;
    for (const name of groupsByStream.get(stream) ?? []) {
      if (!matcher(name)) continue;
      const group = resolveDiscovered(entry, stream, name);
      // A listed pair takes its listed settings.
      if (listedIds.has(group.id)) continue;
      candidates.push(group);
      patternOf.set(group.id, entry);
    }
  }
  const outputs = outputStreams([...listed, ...candidates]);
  // The advisory events stream is the janitor's own output: never a group to sweep.
  const eventsStream = config.events?.stream ?? "";
  if (eventsStream !== "") outputs.add(eventsStream);
  const unclaimed = candidates.filter((group) => !outputs.has(group.stream)).sort(byName);
  const { kept: sources, refused } = withoutRoleCollisions(config, listed, unclaimed);
  scan.refused = refused;
  scan.candidates = sources.length;
  // Stable from scan to scan: the first maxGroups by name, whatever order SCAN returned.
  scan.discovered = sources.slice(0, config.discovery.maxGroups);
  for (const group of sources.slice(config.discovery.maxGroups)) {
    const pattern = patternOf.get(group.id)?.match ?? "";
    scan.overCap.set(pattern, (scan.overCap.get(pattern) ?? 0) + 1);
  }
  return scan;
}

/** The listed groups, then the discovered ones: the list a sweep or a report works on. */
export function combineGroups(
  config: DiscoveryInput,
  discovered: readonly ResolvedGroup[],
): ResolvedGroup[] {
  return [...config.groups.map(resolveGroup), ...discovered];
}

/**
 * Every group of the configuration, listed and discovered, as of now: for one-shot commands
 * (`sweep`, `inspect`). The daemon keeps this up to date with a Discovery instead.
 */
export async function discoverGroups(
  redis: RedisClient,
  config: DiscoveryInput,
): Promise<ResolvedGroup[]> {
  const scan = await scanDiscoverPatterns(scanNodesOf(redis), config, redis);
  return combineGroups(config, scan.discovered);
}
