// How long each target has recently taken to start answering, as this gateway saw it: what the
// "cheapest" strategy weighs against a route's latency goal.
//
// Per process on purpose. A latency estimate is an observation, not state that must agree across
// instances (as a budget must): each gateway judges the providers from where it stands, and a
// cold instance starts by trusting every target.
//
// Streamed and non-streamed calls are kept apart: a stream's figure is the time to its first
// token, a whole answer's the time to all of it, and a route's goal means the one the client
// waits for.

/** How long an observation counts. After that a demoted target is tried again, and so re-measured. */
export const LATENCY_WINDOW_MS = 5 * 60_000;
/** The most recent calls kept per target and kind. */
const KEPT = 16;
/**
 * Calls needed before a target is judged. One slow call (a cold start) must not demote a cheap
 * target: demoted, it gets no calls to be re-measured by until its slow ones age out.
 */
export const MIN_SAMPLES = 3;

type Sample = { at: number; ms: number };

export class TargetLatency {
  private readonly samples = new Map<string, Sample[]>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  observe(provider: string, model: string, streamed: boolean, ms: number): void {
    const key = keyOf(provider, model, streamed);
    let kept = this.samples.get(key);
    if (!kept) this.samples.set(key, (kept = []));
    kept.push({ at: this.now(), ms });
    if (kept.length > KEPT) kept.shift();
  }

  /** The median of the recent calls' times, or undefined when fewer than MIN_SAMPLES are within the window. */
  median(provider: string, model: string, streamed: boolean): number | undefined {
    const kept = this.samples.get(keyOf(provider, model, streamed));
    if (!kept) return undefined;
    const since = this.now() - LATENCY_WINDOW_MS;
    const recent = kept.filter((sample) => sample.at >= since).map((sample) => sample.ms).sort((a, b) => a - b);
    if (recent.length < MIN_SAMPLES) return undefined;
    const middle = recent.length >> 1;
    return recent.length % 2 === 1 ? recent[middle]! : (recent[middle - 1]! + recent[middle]!) / 2;
  }
}

function keyOf(provider: string, model: string, streamed: boolean): string {
  return `${provider}\u0000${model}\u0000${streamed ? "stream" : "whole"}`;
}
