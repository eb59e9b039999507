import { writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Loaded into a janitor with `node --require` (CommonJS, as ioredis is): a connection to a port
 * of CHAOS_PORT_MAP goes to the port it maps to. A janitor on Sentinel asks a Sentinel for the
 * primary's address and connects there itself; this sends that connection through the janitor's
 * own proxy of the node (what ioredis's natMap does), so a fault on its link reaches every
 * connection it has, and the janitor's configuration stays the README's.
 */
const HOOK = `"use strict";
const net = require("node:net");
const map = new Map(Object.entries(JSON.parse(process.env.CHAOS_PORT_MAP || "{}")));
const mapped = (port) => map.get(String(port));
for (const name of ["createConnection", "connect"]) {
  const original = net[name];
  net[name] = function (...args) {
    const [first] = args;
    if (typeof first === "object" && first !== null && mapped(first.port) !== undefined) {
      args[0] = { ...first, port: mapped(first.port) };
    } else if (typeof first === "number" && mapped(first) !== undefined) {
      args[0] = mapped(first);
    }
    return original.apply(this, args);
  };
}
`;

/** How a janitor is launched so that its connections to `portMap`'s ports go to their proxies. */
export interface Launch {
  nodeArgs: string[];
  env: Record<string, string>;
}

export async function portMapLaunch(
  dir: string,
  portMap: Readonly<Record<number, number>>,
): Promise<Launch> {
  if (Object.keys(portMap).length === 0) return { nodeArgs: [], env: {} };
  const hook = join(dir, "port-map.cjs");
  await writeFile(hook, HOOK);
  return { nodeArgs: ["--require", hook], env: { CHAOS_PORT_MAP: JSON.stringify(portMap) } };
}
