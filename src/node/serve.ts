import { serve } from "@hono/node-server";
import type { ServerResponse } from "node:http";
import { Agent } from "undici";
import { resolveConfig, type Environment } from "../config/resolve-config.ts";
import { buildGateway } from "../gateway/create-gateway.ts";
import type { AdmissionStore } from "../budgets/admission-store.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import { createTiktokenCounter } from "../metering/tiktoken-counter.ts";
import type { TokenCounter } from "../metering/token-counter.ts";
import { createGatewayTelemetry } from "../telemetry/gateway-telemetry.ts";
import { openStores } from "./open-stores.ts";
import { setupTelemetry } from "./setup-telemetry.ts";
import { createUndiciFetch, createUndiciPost } from "./undici-fetch.ts";

export type StartGatewayOptions = {
  /** The config as parsed JSON; validated here. */
  config: unknown;
  port: number;
  host?: string;
  env?: Environment;
  log?: (line: string) => void;
  /**
   * How adapters reach providers: `undici` (default) is undici.request on a keep-alive pool;
   * `fetch` is Node's global fetch on the same pool, which tests use so that msw can stand in
   * for the cloud providers (msw intercepts fetch, not undici.request).
   */
  upstreamTransport?: "undici" | "fetch";
};

export type RunningGateway = {
  url: string;
  port: number;
  /** The cost ledger and the store behind it (a file, or Redis when the config names one). */
  ledger: Ledger;
  store: LedgerStore;
  /** Budgets' and rate limits' state (Redis, or this process's memory). */
  admissionStore: AdmissionStore;
  /**
   * Stops taking requests and lets those in flight finish; after `drainMs` (default: no limit)
   * cuts the ones still open (each is recorded as aborted). Then writes out the ledger and the
   * telemetry, and closes the upstream connections.
   */
  close(options?: { drainMs?: number }): Promise<void>;
};

let sharedCounter: TokenCounter | undefined;

/** js-tiktoken's ranks take about a second to load: once per process, at start-up, never per request. */
function tokenCounter(): TokenCounter {
  sharedCounter ??= createTiktokenCounter();
  return sharedCounter;
}

/**
 * Starts the gateway on Node. Upstream calls share one keep-alive connection pool per origin, so
 * a request reuses a warm TLS connection instead of paying a handshake, and go through
 * undici.request rather than the global fetch (see undici-fetch.ts for why).
 */
export async function startGateway({
  config,
  port,
  host = "127.0.0.1",
  env = process.env,
  log = console.error,
  upstreamTransport = "undici",
}: StartGatewayOptions): Promise<RunningGateway> {
  const resolved = resolveConfig(config, env);
  for (const warning of resolved.warnings) log(`[tollgate] warning: ${warning}`);

  // No cap on connections per provider: a stream holds its connection for as long as it runs,
  // and a cap shared by every tenant let one key's open streams queue everyone else's requests.
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000 });
  const transport =
    upstreamTransport === "undici" ? { fetch: createUndiciFetch(dispatcher), post: createUndiciPost(dispatcher) } : { fetchOptions: { dispatcher } };
  const { ledger, ledgerStore: store, keyValues, admissionStore, describe } = await openStores(resolved, log);
  // The SDK first: telemetry takes its tracer and meter when it is created.
  const otel = await setupTelemetry(env);
  const telemetry = createGatewayTelemetry({ captureContent: resolved.telemetry?.captureContent ?? false, enabled: otel !== undefined });
  const { app, recorded } = buildGateway({
    config: resolved,
    transport,
    log,
    ledger,
    counter: tokenCounter(),
    telemetry,
    store: keyValues,
    admissionStore,
    // @hono/node-server passes the Node response as the app's env.
    dropClient: (c) => (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing?.destroy(),
  });
  log(`[tollgate] cost records go to ${describe}${otel ? "; OpenTelemetry export is on" : ""}`);

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(started));
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;

  return {
    url: `http://${host}:${actualPort}`,
    port: actualPort,
    ledger,
    store,
    admissionStore,
    async close({ drainMs = Infinity } = {}) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const cut = Number.isFinite(drainMs) && "closeAllConnections" in server ? setTimeout(() => server.closeAllConnections(), drainMs) : undefined;
      await closed;
      clearTimeout(cut);
      // A stream cut off above is recorded once its body sees the cancel: wait for those records.
      await recorded(2_000);
      await ledger.close();
      await otel?.shutdown();
      await dispatcher.close();
    },
  };
}
