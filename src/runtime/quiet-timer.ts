import { timersOutliveRequests } from "./shared-timers.ts";
import { unrefTimer } from "./unref-timer.ts";

/**
 * Tells its listener when a wait has lasted `limitMs`: the clock behind the stream deadlines (an
 * upstream that stopped sending) and the stream keep-alives (a client that would hear nothing).
 *
 * Streams deliver parts by the thousand and open by the hundred per second, so a stream owns no
 * timer: starting and stopping its clock only notes the time, and one sweep shared by every
 * running clock looks at them all a few times per shortest limit. A limit is therefore kept
 * within a quarter of itself (at most 1 s late): ample for keep-alives every 15 s and deadlines
 * of minutes, and it spares every stream a timer made and cleared. On Workers, where a timer
 * dies with the request that made it (shared-timers.ts), each clock keeps a timer of its own.
 */
export interface QuietListener {
  quiet(limitMs: number): void;
}

export class QuietTimer {
  /** When the current wait began; -1 while nothing is being waited on. */
  private since = -1;
  private limitMs = 0;
  /** This clock's own timer, where timers cannot be shared. */
  private own: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly listener: QuietListener) {}

  /** A wait begins now; the listener hears of it if it is still going on after `limitMs`. */
  wait(limitMs: number): void {
    this.since = performance.now();
    this.limitMs = limitMs;
    if (timersOutliveRequests) return sweep.watch(this, limitMs);
    clearTimeout(this.own);
    // Fired means the wait outlasted its limit: pause() and the next wait clear this timer.
    this.own = setTimeout(() => {
      try {
        this.expire();
      } catch {
        // A listener's failure is its stream's, as in the sweep: it must not escape the timer.
      }
    }, limitMs);
  }

  /** The wait is over (what was waited for came); the clock stands until the next `wait`. */
  pause(): void {
    this.since = -1;
    clearTimeout(this.own);
  }

  /** No more waits: the sweep forgets this clock. */
  stop(): void {
    this.since = -1;
    clearTimeout(this.own);
    sweep.forget(this);
  }

  /** Called by the sweep. */
  check(now: number): void {
    if (now - this.since >= this.limitMs) this.expire();
  }

  private expire(): void {
    if (this.since < 0) return;
    this.since = -1;
    this.listener.quiet(this.limitMs); // may start the next wait
  }
}

/** The one interval timer for every running clock; it runs only while some clock does. */
class Sweep {
  private readonly clocks = new Set<QuietTimer>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private everyMs = Infinity;

  watch(clock: QuietTimer, limitMs: number): void {
    this.clocks.add(clock);
    const everyMs = Math.min(1_000, Math.max(5, limitMs / 4));
    if (everyMs >= this.everyMs) return;
    clearInterval(this.timer);
    this.everyMs = everyMs;
    // The streams hold the process open while they run; the sweep alone must not.
    this.timer = unrefTimer(setInterval(() => this.run(), everyMs));
  }

  forget(clock: QuietTimer): void {
    this.clocks.delete(clock);
  }

  get size(): number {
    return this.clocks.size;
  }

  private run(): void {
    const now = performance.now();
    for (const clock of this.clocks) {
      try {
        clock.check(now);
      } catch {
        // A listener's failure is its stream's; it must not reach the timer (an uncaught
        // exception would end the process) nor keep the other clocks from their turn.
        this.clocks.delete(clock);
      }
    }
    if (this.clocks.size > 0) return;
    // Idle: stop, and let the next clock set the pace afresh.
    clearInterval(this.timer);
    this.timer = undefined;
    this.everyMs = Infinity;
  }
}

const sweep = new Sweep();

/** Clocks the sweep is watching: every stream's must be let go of when it ends (for tests). */
export function runningClockCount(): number {
  return sweep.size;
}
