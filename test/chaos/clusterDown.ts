import type { NodeState } from "./slotHandover.js";

/**
 * The master a client sends the lease's commands to: of the nodes whose own line says they master
 * `slot`, the one with the highest config epoch (a killed master keeps its last line until its
 * promoted replica's line, with a higher epoch, claims the slot).
 */
export function masterOfSlot(
  states: ReadonlyMap<string, NodeState>,
  slot: number,
): NodeState | undefined {
  let owner: NodeState | undefined;
  for (const state of states.values()) {
    if (!state.master || !state.slots.some(([first, last]) => first <= slot && slot <= last)) {
      continue;
    }
    if (owner === undefined || state.epoch > owner.epoch) owner = state;
  }
  return owner;
}

/**
 * Whether a node refuses every command, from its answer to CLUSTER INFO: `cluster_state:fail`
 * (it answers CLUSTERDOWN: it lost sight of most masters, as on a starved host, or lacks a slot),
 * or, when the command failed, whether a new connection to it is refused (it is killed). Any
 * other failure says nothing: a timeout (a slow node may still serve the janitors), or the
 * watcher's own connection cut by the nemesis's CLIENT KILL (the node serves new ones).
 */
export function refusesCommands(answer: unknown, refusesConnections = false): boolean | undefined {
  if (answer instanceof Error) return refusesConnections ? true : undefined;
  const state = /cluster_state:(\w+)/u.exec(String(answer))?.[1];
  return state === undefined ? undefined : state !== "ok";
}
