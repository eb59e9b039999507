import { hostname } from "node:os";

/** Who a daemon's events say acted (`by`): hostname:pid, unique among live replicas. */
export function instanceId(): string {
  return `${hostname()}:${process.pid}`;
}
