import { Capacity } from './leased-work';

/** The plainest capacity rule: at most `slots` items at once, whatever they are. */
export class SlotCount<T = unknown> implements Capacity<T> {
  private used = 0;

  constructor(private readonly slots: number) {}

  claimable(): number {
    return Math.max(0, this.slots - this.used);
  }

  acquire(): boolean {
    if (this.used >= this.slots) return false;
    this.used += 1;
    return true;
  }

  release(): void {
    if (this.used > 0) this.used -= 1;
  }

  inUse(): number {
    return this.used;
  }
}
