/**
 * Whether one timer may serve many requests. On Node a timer lives as long as the process, so
 * the stream clocks (quiet-timer.ts) and the reservation keeper each run one timer for every
 * request in flight. A Cloudflare Worker cancels a request's timers when that request ends, so
 * a timer shared with requests still running would silently stop serving them: there, every
 * request keeps its own timers. (Workers say who they are in navigator.userAgent.)
 */
export let timersOutliveRequests: boolean = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent !== "Cloudflare-Workers";

/** Said by the Workers entry, so that its timers are per request even where the runtime is not recognised. */
export function timersDieWithRequests(): void {
  timersOutliveRequests = false;
}
