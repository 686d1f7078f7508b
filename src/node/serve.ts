import { serve } from "@hono/node-server";
import { Agent } from "undici";
import { resolveConfig, type Environment } from "../config/resolve-config.ts";
import { createGateway } from "../gateway/create-gateway.ts";
import { createUndiciFetch } from "./undici-fetch.ts";

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

export type RunningGateway = { url: string; port: number; close(): Promise<void> };

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

  const dispatcher = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000, connections: 256 });
  const transport = upstreamTransport === "undici" ? { fetch: createUndiciFetch(dispatcher) } : { fetchOptions: { dispatcher } };
  const app = createGateway({ config: resolved, transport, log });

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(started));
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;

  return {
    url: `http://${host}:${actualPort}`,
    port: actualPort,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.close();
    },
  };
}
