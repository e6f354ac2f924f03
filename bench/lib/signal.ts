/** A reusable wake-up: `wait()` resolves at the next `fire()`. Lets two loops hand off work. */
export class Signal {
  private waiters: Array<() => void> = [];

  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  fire(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
