/** The last `capacity` items, in a ring: memory stays bounded whatever the number of groups. */
export class SweepRing<T> {
  private readonly ring: T[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  push(entry: T): void {
    if (this.ring.length < this.capacity) this.ring.push(entry);
    else this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
  }

  newestFirst(): T[] {
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)].reverse();
  }
}
