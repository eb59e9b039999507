import type { DownSpan } from "./recovery.js";
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

/** Called when the Cluster goes down for the janitors (true) or serves them again (false). */
export type DownListener = (down: boolean, at: number) => void;

/**
 * The spans the Cluster was down for the janitors, from a look at a time: each change of state
 * opens or closes a span and is told to the listeners; an unknown look leaves the state standing.
 */
export class DownSpans {
  readonly spans: DownSpan[] = [];
  private readonly listeners: DownListener[] = [];
  private down = false;

  onChange(listener: DownListener): void {
    this.listeners.push(listener);
  }

  observe(down: boolean | undefined, at: number): void {
    if (down === undefined || down === this.down) return;
    this.down = down;
    if (down) this.spans.push({ down: at, up: undefined });
    else {
      const open = this.spans[this.spans.length - 1];
      if (open !== undefined) open.up = at;
    }
    for (const listener of this.listeners) listener(down, at);
  }
}
