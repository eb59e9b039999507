import { mkdtemp, readFile, realpath, symlink, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HISTORY, type ChaosGroup } from "./groups.js";
import { PROJECT_ROOT } from "./root.js";

/** A consumer program in a temporary folder that can import ioredis. */
export interface Program {
  dir: string;
  command: string;
  args: string[];
  remove(): Promise<void>;
}

/**
 * What runs before the README's loop in a consumer process: `handle` (fails for poison entries,
 * and in a crashy process exits now and then without acknowledging its batch), and two wrappers
 * on ioredis' Redis class, so that the README's own calls are recorded without changing its code:
 * - xreadgroup: each delivered entry's key goes to the deliveries history;
 * - xack: runs ACK_LUA instead, which acknowledges and, only if XACK returned 1, appends the ack to
 *   the acks history in the same script (an ack that took no effect is not history).
 */
const ACK_LUA = `local n = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if n == 1 then redis.call('RPUSH', KEYS[2], ARGV[3]) end
return n`;

function prelude(group: ChaosGroup): string {
  return `import { Redis as ChaosRedis } from "ioredis";
const chaosRecorder = new ChaosRedis(process.env.REDIS_URL, { protocol: 2 });
const chaosConsumer = process.env.CONSUMER;
const chaosCrashRate = Number(process.env.CHAOS_CRASH_RATE ?? "0");
let chaosState = Number(process.env.CHAOS_SEED ?? "1") >>> 0;
function chaosRandom() {
  chaosState = (chaosState + 0x6d2b79f5) >>> 0;
  let t = chaosState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function chaosKey(fields) {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === "k") return fields[i + 1];
  return "";
}
const chaosHeld = new Map(); // "stream id" -> key, delivered here and not acknowledged yet
const chaosPlain = { xreadgroup: ChaosRedis.prototype.xreadgroup };
ChaosRedis.prototype.xreadgroup = async function (...args) {
  const reply = await chaosPlain.xreadgroup.apply(this, args);
  const records = [];
  for (const [stream, entries] of reply ?? []) {
    for (const [id, fields] of entries) {
      if (fields === null) continue;
      chaosHeld.set(stream + " " + id, chaosKey(fields));
      records.push([chaosKey(fields), ${JSON.stringify(group.group)}, stream, id, Date.now()].join(" "));
    }
  }
  if (records.length > 0) await chaosRecorder.rpush("${HISTORY.deliveries}", ...records);
  return reply;
};
ChaosRedis.prototype.xack = function (stream, group, id) {
  const key = chaosHeld.get(stream + " " + id) ?? "";
  chaosHeld.delete(stream + " " + id);
  const record = [key, stream, id, chaosConsumer, Date.now()].join(" ");
  return this.eval(${JSON.stringify(ACK_LUA)}, 2, stream, "${HISTORY.acks}", group, id, record);
};
async function handle(fields) {
  if (fields.includes("poison")) throw new Error("poison " + chaosKey(fields));
  if (chaosRandom() < chaosCrashRate) {
    // Crash mid-batch: every entry held here stays pending, acknowledged by nobody.
    const held = [...chaosHeld.values()].map((key) => key + " " + ${JSON.stringify(group.group)} + " " + Date.now());
    if (held.length > 0) await chaosRecorder.rpush("${HISTORY.crashes}", ...held);
    process.exit(3);
  }
}
`;
}

/**
 * The first ```js block of README.md after the line holding `after` (as test/support's
 * readmeSnippet reads it, from the project root wherever this file was compiled to).
 */
async function readmeLoop(after: string): Promise<string> {
  const readme = await readFile(join(PROJECT_ROOT, "README.md"), "utf8");
  const open = readme.indexOf("```js\n", readme.indexOf(after));
  const close = readme.indexOf("\n```", open);
  if (readme.indexOf(after) < 0 || open < 0 || close < 0)
    throw new Error(`no js block after ${after}`);
  return readme.slice(open + 6, close + 1);
}

/** The README loop for `group`, with its stream and group names, after the prelude. */
export async function consumerProgram(group: ChaosGroup): Promise<Program> {
  const loop = (await readmeLoop(group.loopAfter))
    .replaceAll("orders", group.stream)
    .replaceAll("billing", group.group);
  const dir = await mkdtemp(join(tmpdir(), "sj-chaos-consumer-"));
  await symlink(await realpath(join(PROJECT_ROOT, "node_modules")), join(dir, "node_modules"));
  const path = join(dir, "consumer.mjs");
  await writeFile(path, prelude(group) + loop);
  const remove = () => rm(dir, { recursive: true, force: true });
  return { dir, command: process.execPath, args: [path], remove };
}
