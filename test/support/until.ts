/**
 * Polls `find` every 10 ms until it gives something (not undefined, not false) and returns that:
 * for what happens outside the test's reach (an upstream seeing an abort, a line in a child's log).
 * `what` names it in the error when it does not come within `timeoutMs`.
 */
export async function until<T>(find: () => T | undefined | false, what: string | (() => string), timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined && found !== false) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
