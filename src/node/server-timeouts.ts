// The Node server's own clocks, from the config's `server` section.

export type ServerTimeouts = { requestTimeoutSeconds: number; keepAliveTimeoutSeconds: number };

/** A request's headers must arrive within this much of server.requestTimeoutSeconds: at most 20 s. */
export function headersTimeoutSeconds(requestTimeoutSeconds: number): number {
  return Math.min(20, requestTimeoutSeconds);
}

/**
 * How long a client may take to send its request (server.requestTimeoutSeconds; its headers, at
 * most 20 s of it). Node checks for requests past their deadline every connectionsCheckingInterval
 * (30 s by default): a quarter of the deadline here, so a request is cut within 25% of it. And how
 * long an idle keep-alive connection waits for the next request (server.keepAliveTimeoutSeconds).
 */
export function serverTimeouts({ requestTimeoutSeconds, keepAliveTimeoutSeconds }: ServerTimeouts) {
  const requestTimeout = requestTimeoutSeconds * 1000;
  return {
    requestTimeout,
    headersTimeout: headersTimeoutSeconds(requestTimeoutSeconds) * 1000,
    connectionsCheckingInterval: Math.max(250, Math.min(5_000, requestTimeout / 4)),
    keepAliveTimeout: keepAliveTimeoutSeconds * 1000,
  };
}
