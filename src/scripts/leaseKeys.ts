/** The keys of the lease, all in the lease key's hash slot (see LeaseLock.companionKey). */
export interface LeaseKeys {
  /** The lease key, set by redlock. */
  readonly lease: string;
  /** The fencing-token counter. */
  readonly token: string;
  /** The holder record, a hash. */
  readonly holder: string;
}

/** KEYS of the lease scripts, in their order. */
export function leaseKeyList(keys: LeaseKeys): string[] {
  return [keys.lease, keys.token, keys.holder];
}
