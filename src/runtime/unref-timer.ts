/**
 * Lets the process exit while only this timer is pending (Node); elsewhere (Workers) timers have
 * no such notion and the call does nothing. For timers that watch work which holds the process
 * open on its own: a deadline, a renewal, a sweep.
 */
export function unrefTimer<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
