import { historyKey, MIN_IDLE_MS, type ChaosGroup } from "./groups.js";
import { LOCAL_LOG_ENV, WAIT_MS_ENV } from "./localHistory.js";

/**
 * XACK and, only if it took effect (returned 1), the acknowledgement appended to the history in
 * the same script: an ack that took no effect is not history.
 */
export const ACK_LUA = `local n = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if n == 1 then redis.call('RPUSH', KEYS[2], ARGV[3]) end
return n`;

/** How often a behaviour strikes per entry handled, and how long a slow handling takes. */
export const CRASH_RATE = 0.01;
export const SLOW_RATE = 0.03;
export const SLOW_MS = Math.round(MIN_IDLE_MS * 1.5);
/**
 * Handling that starts this long after the entry reached the consumer is recorded as a stall
 * ("late"): the entry waited behind its batch-mates, their acknowledgements and a busy host, and
 * with the time its reply took to be read the janitor may already count it idle past minIdleMs.
 */
export const LATE_MS = Math.round(MIN_IDLE_MS / 2);
/** A hot loop re-reads a failing entry from its own PEL this many times, 20 ms apart. */
const REREADS = 8;

/**
 * What runs before the README's ioredis loop in a consumer process: `handle`, `chaosClient` (on
 * Redis Cluster the loop's client is ioredis's Cluster, consumerProgram.ts), and wrappers on
 * ioredis' Redis and Cluster classes so that the README's own calls are recorded without changing
 * its code (each record goes to the group's history keys, in the slot of its stream):
 * - xreadgroup and xclaim (without JUSTID): each delivered entry goes to the deliveries history,
 *   as "key group stream id ms how consumer" (how: new for `>`, own for a read of its own PEL,
 *   reread for the hot loop's re-reads);
 * - xack runs ACK_LUA instead, then (on Sentinel and Cluster) WAIT 1 on the node that took it:
 *   does its replica hold it?
 * Each record also goes to the process's local log (localHistory.ts), which a failover cannot
 * drop: deliveries, stalls, and each acknowledgement that took effect with WAIT's verdict.
 * `handle` fails for poison entries (a hot consumer first re-reads it from its own PEL at once,
 * as a loop that retries immediately would), and by behaviour: crashy exits now and then in the
 * middle of a batch without acknowledging it; slow takes 1.5 x minIdleMs now and then, and
 * heartbeat does too while beating for the entry as the README's processWithHeartbeat does.
 * What a crash or a stall holds past minIdleMs is recorded as a stall (its handling failed), and
 * so is an entry whose handling starts LATE_MS after it arrived.
 */
export function jsPrelude(group: ChaosGroup): string {
  const g = JSON.stringify(group.group);
  const [deliveries, acks, stalls] = (["deliveries", "acks", "stalls"] as const).map((kind) =>
    JSON.stringify(historyKey(group.stream, kind)),
  );
  return `import { appendFileSync as chaosAppend } from "node:fs";
import { Cluster as ChaosCluster, Redis as ChaosRedis } from "ioredis";
// On Redis Cluster: every node as a seed ([{host, port}]), so a killed one is no obstacle.
const chaosNodes = process.env.CHAOS_CLUSTER_NODES;
function chaosClient() {
  if (chaosNodes === undefined) return new ChaosRedis(process.env.REDIS_URL, { protocol: 2 });
  return new ChaosCluster(JSON.parse(chaosNodes), { redisOptions: { protocol: 2 } });
}
const chaosRecorder = chaosClient();
chaosRecorder.on("error", () => {});
const chaosConsumer = process.env.CONSUMER;
const chaosBehaviour = process.env.CHAOS_BEHAVIOUR ?? "healthy";
let chaosState = Number(process.env.CHAOS_SEED ?? "1") >>> 0;
function chaosRandom() {
  chaosState = (chaosState + 0x6d2b79f5) >>> 0;
  let t = chaosState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const chaosSleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// The local log (localHistory.ts): what Redis answered, kept outside Redis, and WAIT's verdict.
const chaosLog = process.env.${LOCAL_LOG_ENV};
const chaosWaitMs = Number(process.env.${WAIT_MS_ENV} ?? "0");
function chaosLocal(kind, records, confirmed, at = Date.now()) {
  if (chaosLog === undefined || records.length === 0) return;
  const flag = confirmed === undefined ? "-" : confirmed ? "1" : "0";
  chaosAppend(chaosLog, records.map((r) => [kind, at, flag, r].join("\\t") + "\\n").join(""));
}
// The write, then WAIT 1 in one pipeline, on one connection: WAIT answers for this write. On
// Cluster, ioredis sends the pipeline (keyless WAIT included) to the master of the write's slot.
// Redirected (MOVED, ASK, TRYAGAIN): sent again by the client's own routing, unconfirmed.
async function chaosWrite(client, command, args) {
  if (chaosWaitMs <= 0) return [await client.call(command, ...args), Date.now(), undefined];
  let at = 0;
  const answered = () => void (at = Date.now());
  const replies = await client.pipeline().call(command, args, answered).call("WAIT", 1, chaosWaitMs).exec();
  const [[error, reply], [waitError, waited]] = replies;
  if (error) {
    if (!/^(?:MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\\b/.test(error.message)) throw error;
    return [await client.call(command, ...args), Date.now(), false];
  }
  return [reply, at, !waitError && Number(waited) >= 1];
}
function chaosKey(fields) {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === "k") return fields[i + 1];
  return "";
}
const chaosHeld = new Map(); // "stream id" -> key, delivered here and not acknowledged yet
const chaosWhere = new Map(); // key -> [stream, id] of its latest delivery here
const chaosSeenAt = new Map(); // key -> when its latest delivery reached this process
function chaosNote(stream, entries, how) {
  const records = [];
  for (const [id, fields] of entries ?? []) {
    if (fields === null) continue;
    const key = chaosKey(fields);
    chaosHeld.set(stream + " " + id, key);
    chaosWhere.set(key, [stream, id]);
    chaosSeenAt.set(key, Date.now());
    records.push([key, ${g}, stream, id, Date.now(), how, chaosConsumer].join(" "));
  }
  return records;
}
async function chaosRecord(records) {
  chaosLocal("deliveries", records);
  if (records.length > 0) await chaosRecorder.rpush(${deliveries}, ...records);
}
const chaosPlain = { xreadgroup: ChaosRedis.prototype.xreadgroup, xclaim: ChaosRedis.prototype.xclaim };
for (const ChaosClient of [ChaosRedis, ChaosCluster]) {
ChaosClient.prototype.xreadgroup = async function (...args) {
  const reply = await chaosPlain.xreadgroup.apply(this, args);
  const how = args[args.length - 1] === ">" ? "new" : "own";
  const records = [];
  for (const [stream, entries] of reply ?? []) records.push(...chaosNote(stream, entries, how));
  await chaosRecord(records);
  return reply;
};
ChaosClient.prototype.xclaim = async function (...args) {
  const reply = await chaosPlain.xclaim.apply(this, args);
  if (!args.includes("JUSTID")) await chaosRecord(chaosNote(args[0], reply, "own"));
  return reply;
};
ChaosClient.prototype.xack = async function (stream, group, id) {
  const key = chaosHeld.get(stream + " " + id) ?? "";
  chaosHeld.delete(stream + " " + id);
  const record = [key, group, stream, id, chaosConsumer, Date.now()].join(" ");
  const args = [${JSON.stringify(ACK_LUA)}, 2, stream, ${acks}, group, id, record];
  const [done, at, confirmed] = await chaosWrite(this, "eval", args);
  if (done === 1) chaosLocal("acks", [record], confirmed, at);
  return done;
};
}
async function chaosStall(why, except) {
  const held = [...chaosHeld.values()].filter((key) => key !== except);
  const records = held.map((key) => [key, ${g}, Date.now(), why].join(" "));
  chaosLocal("stalls", records);
  if (records.length > 0) await chaosRecorder.rpush(${stalls}, ...records);
}
function chaosBefore(id) {
  const [ms, seq] = id.split("-");
  return seq === "0" ? (BigInt(ms) - 1n) + "-18446744073709551615" : ms + "-" + (BigInt(seq) - 1n);
}
async function chaosHotLoop(key) {
  const [stream, id] = chaosWhere.get(key) ?? ["", ""];
  for (let i = 0; i < ${REREADS}; i += 1) {
    const read = ["GROUP", ${g}, chaosConsumer, "COUNT", 1, "STREAMS", stream, chaosBefore(id)];
    const reply = await chaosPlain.xreadgroup.apply(chaosRecorder, read);
    await chaosRecord(chaosNote(stream, reply?.[0]?.[1], "reread"));
    await chaosSleep(20);
  }
}
async function chaosSlow(key) {
  if (chaosBehaviour === "slow") {
    await chaosStall("slow");
    return chaosSleep(${SLOW_MS});
  }
  // The batch-mates wait unbeaten: they idle past minIdleMs.
  await chaosStall("slow", key);
  const [stream, id] = chaosWhere.get(key) ?? ["", ""];
  const heartbeat = setInterval(() => {
    chaosRecorder.xclaim(stream, ${g}, chaosConsumer, 0, id, "JUSTID").catch(() => {});
  }, ${Math.round(MIN_IDLE_MS / 3)});
  try {
    await chaosSleep(${SLOW_MS});
  } finally {
    clearInterval(heartbeat);
  }
}
async function handle(fields) {
  const key = chaosKey(fields);
  // Its batch-mates' work (and a starved host) kept it waiting: the janitor may take it.
  if (Date.now() - (chaosSeenAt.get(key) ?? Date.now()) > ${LATE_MS}) {
    const late = [key, ${g}, Date.now(), "late"].join(" ");
    chaosLocal("stalls", [late]);
    await chaosRecorder.rpush(${stalls}, late);
  }
  if (fields.includes("poison")) {
    if (chaosBehaviour === "hot") await chaosHotLoop(key);
    throw new Error("poison " + key);
  }
  if (chaosBehaviour === "crashy" && chaosRandom() < ${CRASH_RATE}) {
    // Crash mid-batch: every entry held here stays pending, acknowledged by nobody.
    await chaosStall("crash");
    process.exit(3);
  }
  const slow = chaosBehaviour === "slow" || chaosBehaviour === "heartbeat";
  if (slow && chaosRandom() < ${SLOW_RATE}) await chaosSlow(key);
}
`;
}
