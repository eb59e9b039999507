/**
 * The part of redlock 5.0.0-beta.2 that the lease uses: acquire, extend and release of a Lock,
 * the "error" event (all documented in its README), and the text of its release script (public
 * in its own typings, so that it can be cached before an acquire). Declared here because the package's
 * `exports` map has no "types" entry, so NodeNext resolution cannot find its own typings
 * (node-redlock #173, #290); this replaces a tsconfig `paths` entry into node_modules.
 */
declare module "redlock" {
  import { EventEmitter } from "node:events";
  import type { Cluster, Redis } from "ioredis";

  export interface Settings {
    readonly driftFactor: number;
    readonly retryCount: number;
    readonly retryDelay: number;
    readonly retryJitter: number;
    readonly automaticExtensionThreshold: number;
  }

  /** A vote against because the resource holds another value (contention, not a failure). */
  export class ResourceLockedError extends Error {}

  /** The operation did not reach a quorum; the cause was emitted as an "error" event. */
  export class ExecutionError extends Error {}

  export class Lock {
    readonly resources: string[];
    /** The random value redlock wrote into the key. */
    readonly value: string;
    /** Wall-clock ms (redlock's estimate; LeaseLock judges validity on the monotonic clock). */
    expiration: number;
    release(): Promise<unknown>;
    extend(duration: number): Promise<Lock>;
  }

  export default class Redlock extends EventEmitter<{ error: [Error] }> {
    constructor(clients: Iterable<Redis | Cluster>, settings?: Partial<Settings>);
    readonly scripts: { readonly releaseScript: { readonly value: string; readonly hash: string } };
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
    release(lock: Lock, settings?: Partial<Settings>): Promise<unknown>;
    extend(lock: Lock, duration: number, settings?: Partial<Settings>): Promise<Lock>;
  }
}
