/**
 * Runs `callback` once the current turn of the event loop is over: after the I/O callbacks and
 * promise jobs already queued, so whatever they add joins the same batch. Node has setImmediate;
 * Workers fall back to a zero timer.
 */
export const nextTurn: (callback: () => void) => void =
  (globalThis as { setImmediate?: (callback: () => void) => void }).setImmediate ?? ((callback) => setTimeout(callback, 0));
