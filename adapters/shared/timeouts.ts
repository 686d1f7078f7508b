/** How long a provider may take when its config names no `timeoutMs`: 10 minutes, as the official SDKs. */
export const DEFAULT_TIMEOUT_MS = 600_000;

/**
 * The message of a timeout, whichever clock noticed it first: the adapter's own (the SDKs' wait
 * for headers) or the router's deadline (src/routing/call-deadlines.ts). The client reads the same.
 */
export function didNotAnswer(where: string, timeoutMs: number | undefined): string {
  return timeoutMs === undefined ? `${where} did not answer in time` : `${where} did not answer within ${timeoutMs} ms`;
}
