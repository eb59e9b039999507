/**
 * The baseline of scenario 9: a plain script that imports ioredis and sends the commands
 * `stream-janitor inspect` sends for one group (read from MONITOR), nothing else of the product.
 * Same connection options in spirit (protocol 2, a connection name, the ready check's INFO), the
 * same two pipelines, the report as JSON on stdout, then disconnect, as inspect does.
 *
 * `node plainInspect.js URL STREAM GROUP [LEASE_KEY]`
 */
import { Redis } from "ioredis";

async function main(): Promise<void> {
  const [url, stream, group, leaseKey = "stream-janitor:lease"] = process.argv.slice(2);
  if (url === undefined || stream === undefined || group === undefined) {
    throw new Error("usage: plainInspect.js URL STREAM GROUP [LEASE_KEY]");
  }
  const deadLetters = `{${stream}}:dead`;
  const redis = new Redis(url, {
    protocol: 2,
    connectionName: "plain:inspect",
    lazyConnect: true,
    maxRetriesPerRequest: 1,
  });
  try {
    await redis.connect();
    // readGroupSnapshots: TIME, then per stream XLEN and XINFO GROUPS, per group the XPENDING
    // summary, the oldest pending entry and the dead-letter stream's length.
    const first = (await redis
      .pipeline()
      .call("TIME")
      .call("XLEN", stream)
      .call("XINFO", "GROUPS", stream)
      .call("XPENDING", stream, group)
      .call("XPENDING", stream, group, "-", "+", 1)
      .call("XLEN", deadLetters)
      .exec()) as [Error | null, unknown][];
    const groups = (first[2]?.[1] ?? []) as unknown[][];
    const info = groups.find((fields) => fields[fields.indexOf("name") + 1] === group) ?? [];
    const lastDelivered = info[info.indexOf("last-delivered-id") + 1];
    const after = typeof lastDelivered === "string" ? `(${lastDelivered}` : "+";
    // The lease and its companions, then the first dead letter, the stream's first entry and the
    // first entry after the group's last-delivered id.
    const second = (await redis
      .pipeline()
      .call("GET", leaseKey)
      .call("PTTL", leaseKey)
      .call("GET", `{${leaseKey}}:token`)
      .call("HGETALL", `{${leaseKey}}:holder`)
      .call("XRANGE", deadLetters, "-", "+", "COUNT", 1)
      .call("XRANGE", stream, "-", "+", "COUNT", 1)
      .call("XRANGE", stream, after, "+", "COUNT", 1)
      .exec()) as [Error | null, unknown][];
    const values = [...first, ...second].map(([error, value]) => error?.message ?? value);
    process.stdout.write(`${JSON.stringify(values)}\n`);
  } finally {
    redis.disconnect();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`plainInspect: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
