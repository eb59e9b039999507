/** A span Redis was down: from its kill to its answering again (`up` undefined: still down). */
export interface DownSpan {
  down: number;
  up: number | undefined;
}

/** Called when Redis goes down for the janitors (true) or serves them again (false). */
export type DownListener = (down: boolean, at: number) => void;

/**
 * The spans Redis was down for the janitors (a standalone Redis killed and replaying its AOF; a
 * Cluster whose lease's master refused commands, clusterDown.ts), from what was seen when: each
 * change of state opens or closes a span and is told to the listeners; an unknown look
 * (undefined) leaves the state standing.
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
