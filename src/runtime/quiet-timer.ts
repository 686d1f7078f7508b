/**
 * Calls `onQuiet` when a wait has lasted `limitMs`: the clock behind the stream deadlines (an
 * upstream that stopped sending) and the stream keep-alives (a client that would hear nothing).
 *
 * Streams deliver parts by the thousand, so starting and stopping the clock only notes the time:
 * there is one timer, and it is re-armed only when it runs out while the wait it was set for is
 * over (or when a shorter limit needs it sooner).
 */
export class QuietTimer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the current wait began; -1 while nothing is being waited on. */
  private since = -1;
  private limitMs = 0;
  private dueAt = 0;

  constructor(private readonly onQuiet: (limitMs: number) => void) {}

  /** A wait begins now; `onQuiet` runs if it is still going on after `limitMs`. */
  wait(limitMs: number): void {
    this.since = performance.now();
    this.limitMs = limitMs;
    if (this.timer && this.dueAt > this.since + limitMs) this.stop();
    this.timer ??= this.schedule(limitMs);
  }

  /** The wait is over (what was waited for came); the clock stands until the next `wait`. */
  pause(): void {
    this.since = -1;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): ReturnType<typeof setTimeout> {
    this.dueAt = performance.now() + ms;
    const timer = setTimeout(this.check, Math.max(1, Math.ceil(ms)));
    // What is being waited on holds the process open if it must; this timer alone must not.
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  private readonly check = () => {
    this.timer = undefined;
    if (this.since < 0) return; // nothing being waited on: the next wait re-arms
    const leftMs = this.since + this.limitMs - performance.now();
    if (leftMs > 0) {
      this.timer = this.schedule(leftMs);
      return;
    }
    this.since = -1;
    this.onQuiet(this.limitMs); // may start the next wait
  };
}
