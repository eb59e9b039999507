import type { Redis } from "ioredis";

/** The two ends of a slot migration, with a plain (non-cluster) client of each node. */
export interface MigrationEnds {
  readonly slot: number;
  readonly source: { readonly id: string; readonly admin: Redis };
  readonly target: { readonly id: string; readonly port: number; readonly admin: Redis };
  /** Plain clients of the other running masters, told the new owner at the end. */
  readonly others: readonly Redis[];
  /** MIGRATE's timeout (5 s unless given: the chaos harness moves streams of many MiB). */
  readonly migrateTimeoutMs?: number;
}

export interface SlotMigration {
  moveKeys(keys: readonly string[]): Promise<void>;
  finish(): Promise<void>;
}

/**
 * A slot migration in steps, as `redis-cli --cluster reshard` does it: the target IMPORTING and
 * the source MIGRATING (from then on the source answers ASK for keys it no longer holds, and
 * TRYAGAIN for multi-key commands whose keys are split); moveKeys() MIGRATEs some keys; finish()
 * moves the rest and gives the slot to the target on every node.
 */
export async function beginSlotMigration(ends: MigrationEnds): Promise<SlotMigration> {
  const { slot, source, target } = ends;
  await target.admin.call("CLUSTER", "SETSLOT", slot, "IMPORTING", source.id);
  await source.admin.call("CLUSTER", "SETSLOT", slot, "MIGRATING", target.id);
  const moveKeys = async (keys: readonly string[]): Promise<void> => {
    if (keys.length === 0) return;
    const timeout = ends.migrateTimeoutMs ?? 5000;
    await source.admin.call("MIGRATE", "127.0.0.1", target.port, "", 0, timeout, "KEYS", ...keys);
  };
  return {
    moveKeys,
    async finish() {
      for (;;) {
        const keys = (await source.admin.call("CLUSTER", "GETKEYSINSLOT", slot, 100)) as string[];
        if (keys.length === 0) break;
        await moveKeys(keys);
      }
      // The target first, as redis-cli does, so it owns the slot before anyone redirects.
      await target.admin.call("CLUSTER", "SETSLOT", slot, "NODE", target.id);
      await source.admin.call("CLUSTER", "SETSLOT", slot, "NODE", target.id);
      // The other masters learn it now rather than by gossip (replicas follow theirs).
      for (const admin of ends.others) {
        await admin.call("CLUSTER", "SETSLOT", slot, "NODE", target.id).catch((error: unknown) => {
          if (!(error instanceof Error && /only with masters/u.test(error.message))) throw error;
        });
      }
    },
  };
}
