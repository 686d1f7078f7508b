import { serve } from "@hono/node-server";
import { setMaxListeners } from "node:events";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
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
import { keepUnsettled, REPLAY_RETRY_MS, replayUnwritten } from "./unwritten-records.ts";
import { createUndiciFetch, createUndiciPost } from "./undici-fetch.ts";
import { oneLine } from "./one-line.ts";
import { answerClientErrors } from "./answer-client-errors.ts";
import { serverTimeouts, type ServerTimeouts } from "./server-timeouts.ts";
import { STALE_AFTER_MS } from "./store-lock.ts";

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
  /** How often what earlier gateways kept is tried again while the store refuses it (default a minute). */
  replayRetryMs?: number;
  /** The most cost records held in memory while the store is down (default 10,000); the rest are kept in files (Redis), or logged whole (the embedded file). */
  maxQueuedRecords?: number;
  /**
   * How long start-up on the embedded store waits for another gateway on its store.path to stop
   * (default: the stop's drain and write-out bound, storeLockWaitMs below).
   */
  storeLockWaitMs?: number;
};

/** After the drain, the time a stop keeps for writing out records, settlements and the ledger before its forced exit. */
export const WRITE_OUT_MS = 13_000;

/**
 * A gateway being restarted holds its store.path until its stop has drained and written out:
 * server.drainAnswersSeconds, then WRITE_OUT_MS at most (main.ts exits then). The new one waits
 * that long, and 5 s more; at least long enough to see a holder that stopped its heartbeat.
 */
export function storeLockWaitMs(drainAnswersSeconds: number): number {
  return Math.max(drainAnswersSeconds * 1000 + WRITE_OUT_MS, STALE_AFTER_MS) + 5_000;
}

/** What a stop could neither write nor keep for the next start: lost, and logged each as an error. */
export type StopOutcome = { lostRecords: number; lostSettlements: number };

export type RunningGateway = {
  url: string;
  port: number;
  /** The cost ledger and the store behind it (a file, or Redis when the config names one). */
  ledger: Ledger;
  store: LedgerStore;
  /** Budgets' and rate limits' state (Redis, or this process's memory). */
  admissionStore: AdmissionStore;
  /**
   * Stops taking requests and lets those in flight finish; after `streamDrainMs` ends the streams
   * still open with an error event (`gateway_stopping`, recorded as an error), and after `drainMs`
   * (default for both: no limit) closes every connection still open. Then writes out the ledger
   * and the telemetry, closes the upstream connections, and says what could be neither written
   * nor kept.
   */
  close(options?: { drainMs?: number; streamDrainMs?: number }): Promise<StopOutcome>;
  /** The config's drain on a stop signal (server.drainStreamsSeconds, server.drainAnswersSeconds), for `close`. */
  drainOnStop: { streamDrainMs: number; drainMs: number };
};

/**
 * The upstream connection pool. No cap on connections per provider: a stream holds its connection
 * for as long as it runs, and a cap shared by every tenant let one key's open streams queue
 * everyone else's requests. No undici timeouts on headers or body (its defaults are 300 s): the
 * provider's `timeoutMs` and `streamIdleTimeoutMs` bound each call (call-deadlines.ts), and
 * undici's cut a local decoder's long answer at 5 minutes, reported as the 600 s `timeoutMs`.
 */
export const UPSTREAM_AGENT_OPTIONS = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000, headersTimeout: 0, bodyTimeout: 0 } as const;

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
  log: writeLog = console.error,
  upstreamTransport = "undici",
  replayRetryMs = REPLAY_RETRY_MS,
  maxQueuedRecords,
  storeLockWaitMs: lockWaitMs,
}: StartGatewayOptions): Promise<RunningGateway> {
  const log = (line: string) => writeLog(oneLine(line));
  const resolved = resolveConfig(config, env);
  for (const warning of resolved.warnings) log(`[tollgate] warning: ${warning}`);
  // Only a Node server has a stop drain (a Worker has no stop signal): said here, not in the config's own warnings.
  const { drainStreamsSeconds, drainAnswersSeconds } = resolved.server;
  if (drainStreamsSeconds > drainAnswersSeconds) {
    log(`[tollgate] warning: server.drainStreamsSeconds (${drainStreamsSeconds}) is more than server.drainAnswersSeconds (${drainAnswersSeconds}): on a stop, streams are cut at ${drainAnswersSeconds} s, when every connection still open is closed; raise drainAnswersSeconds to give them longer`);
  }

  const dispatcher = new Agent(UPSTREAM_AGENT_OPTIONS);
  const transport =
    upstreamTransport === "undici" ? { fetch: createUndiciFetch(dispatcher), post: createUndiciPost(dispatcher) } : { fetchOptions: { dispatcher } };
  const { ledger, ledgerStore: store, keyValues, admissionStore, describe, keptFiles, lock } = await openStores(resolved, log, {
    ...(maxQueuedRecords ? { maxQueuedRecords } : {}),
    lockWaitMs: lockWaitMs ?? storeLockWaitMs(drainAnswersSeconds),
  }).catch(async (error: unknown) => {
    await dispatcher.close();
    throw error;
  });
  // Aborted after the streams' drain: every stream still running ends with an error event in its
  // client's dialect saying the gateway stopped (one waiting on a client that reads nothing sees
  // it only when the client reads: those connections are closed below).
  const stopping = new AbortController();
  // One listener per running stream: many, and none left behind (Node would warn past 10).
  setMaxListeners(0, stopping.signal);
  let otel: Awaited<ReturnType<typeof setupTelemetry>>;
  let gateway: ReturnType<typeof buildGateway>;
  let server: Server;
  let replayTimer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  try {
    // The SDK first: telemetry takes its tracer and meter when it is created.
    otel = await setupTelemetry(env, log);
    const telemetry = createGatewayTelemetry({ captureContent: resolved.telemetry?.captureContent ?? false, enabled: otel !== undefined });
    gateway = buildGateway({
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
      stop: stopping.signal,
    });
    log(`[tollgate] cost records go to ${describe}${otel ? "; OpenTelemetry export is on" : ""}`);
    // What a gateway stopped during a Redis outage kept: settled and recorded before serving. A
    // store still down at start-up gets them later: tried again every minute until it takes them
    // (a pod that started during the outage would otherwise hold them until its next restart).
    // Every minute after that too: records past what the ledger holds in memory during an outage
    // are kept in the same directory while this gateway runs (Ledger's maxQueued).
    if (keptFiles) {
      const replay = () => replayUnwritten(keptFiles, { ledger: store, settle: (plan) => admissionStore.settle(plan) }, log);
      const again = () => {
        if (stopped) return; // a try that was under way when the gateway closed goes no further
        replayTimer = setTimeout(() => void replay().finally(again), replayRetryMs);
        replayTimer.unref();
      };
      await replay();
      again();
    }
    server = (await listen(gateway.app.fetch, port, host, resolved.server)) as Server;
  } catch (error) {
    // Nothing may hold the process open after a failed start (a supervisor restarts it): any
    // start-up error once the stores are open (a port in use, an OTLP endpoint that is not a URL)
    // closes what was opened. The Redis connection left open kept the process running, never listening.
    stopped = true;
    clearTimeout(replayTimer);
    await ledger.close(0);
    await lock?.release();
    await otel?.shutdown();
    await dispatcher.close();
    throw error;
  }
  const { recorded, finishSettling } = gateway;
  const draining = drainOnClose(server);
  answerBeforeUpload(server, resolved.server.maxBodyBytes);
  answerClientErrors(server, resolved.server.requestTimeoutSeconds);
  streamsForHttp10(server);
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;

  return {
    url: `http://${host}:${actualPort}`,
    port: actualPort,
    ledger,
    store,
    admissionStore,
    // Every connection still open is closed when the answers' drain ends: a longer stream drain
    // would be cut there anyway, so it is at most that.
    drainOnStop: {
      streamDrainMs: Math.min(drainStreamsSeconds, drainAnswersSeconds) * 1000,
      drainMs: drainAnswersSeconds * 1000,
    },
    async close({ drainMs = Infinity, streamDrainMs = drainMs } = {}) {
      draining.begin();
      stopped = true;
      clearTimeout(replayTimer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // At streamDrainMs every stream still running ends with an error event saying the gateway
      // stopped, and so does one that begins later. A stream whose client reads nothing cannot
      // take that event: from a second later its connection is closed (looked for every 250 ms).
      let cuttingStreams: ReturnType<typeof setTimeout> | undefined;
      const closeStuckStreams = () => {
        draining.cutStreams();
        cuttingStreams = setTimeout(closeStuckStreams, 250);
      };
      const cutStreams = Number.isFinite(streamDrainMs)
        ? setTimeout(() => {
            stopping.abort();
            cuttingStreams = setTimeout(closeStuckStreams, 1_000);
          }, streamDrainMs)
        : undefined;
      const cut = Number.isFinite(drainMs) && "closeAllConnections" in server ? setTimeout(() => server.closeAllConnections(), drainMs) : undefined;
      await closed;
      clearTimeout(cutStreams);
      clearTimeout(cuttingStreams);
      clearTimeout(cut);
      // A stream cut off above is recorded once its body sees the cancel: wait for those records.
      await recorded(2_000);
      // Settlements still retrying go now (the store may be back), or are kept for the next start.
      const unsettled = await finishSettling();
      let lostSettlements = 0;
      if (unsettled.length > 0) {
        const kept = keptFiles ? await keepUnsettled(keptFiles)(unsettled).catch(() => undefined) : undefined;
        if (!kept) lostSettlements = unsettled.length;
        log(`[tollgate] error: ${unsettled.length} budget settlements could not be made before shutdown${kept ? `; kept in ${kept}, applied at the next start` : ""}`);
      }
      try {
        const { lost } = await ledger.close();
        return { lostRecords: lost, lostSettlements };
      } finally {
        // The next gateway on this store.path (a restart's, waiting) reads the file once it is closed.
        await lock?.release();
        // The spans and metrics of the last requests go out even when the ledger's store failed to close.
        await Promise.allSettled([otel?.shutdown(), dispatcher.close()]);
      }
    },
  };
}

/** Listens, or fails with what to do: a port in use is a start-up error, not an unhandled 'error' event. */
function listen(fetch: (request: Request, env: unknown) => Response | Promise<Response>, port: number, host: string, timeouts: ServerTimeouts): Promise<ReturnType<typeof serve>> {
  return new Promise((resolve, reject) => {
    const started = serve({ fetch, port, hostname: host, serverOptions: serverTimeouts(timeouts) }, () => {
      started.off("error", failed);
      resolve(started);
    });
    const failed = (error: NodeJS.ErrnoException) => {
      const fix = error.code === "EADDRINUSE" ? "is already in use: stop the other process or set PORT" : error.code === "EACCES" ? "may not be opened by this user: set PORT above 1023" : `cannot be opened (${error.message})`;
      reject(new Error(`port ${port} on ${host} ${fix}`));
    };
    started.once("error", failed);
  });
}

/**
 * Shutdown behind a load balancer, which keeps connections open: server.close() closes only the
 * connections idle at that moment. Once it has begun, every answer says `Connection: close` (the
 * balancer stops sending there), and a connection is closed as soon as its answer in flight ends,
 * so close() returns when the last answer does, not at the keep-alive timeout.
 */
function drainOnClose(server: Server) {
  let closing = false;
  const open = new Set<ServerResponse>();
  // Node's closeIdleConnections() passes over a keep-alive connection whose client aborted a
  // stream and kept it (seen with undici): with a 65 s keep-alive timeout that held close() for a
  // minute. A connection is closed here too when it is at rest: no answer in flight, and not a
  // byte read since the last one ended (one whose next request is arriving is left to Node, which
  // answers it with `Connection: close`).
  const sockets = new Set<Socket>();
  const bytesAtRest = new WeakMap<Socket, number>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    bytesAtRest.set(socket, 0);
    socket.once("close", () => sockets.delete(socket));
  });
  const atRest = (socket: Socket) => !(socket as Socket & { _httpMessage?: unknown })._httpMessage && socket.bytesRead === bytesAtRest.get(socket);
  const closeIdle = () => {
    server.closeIdleConnections();
    for (const socket of sockets) if (atRest(socket)) socket.destroy();
  };
  const closeWhenIdle = () => setImmediate(closeIdle);
  server.on("request", (incoming: IncomingMessage, outgoing: ServerResponse) => {
    open.add(outgoing);
    if (closing) outgoing.shouldKeepAlive = false;
    const socket = incoming.socket as Socket;
    outgoing.once("close", () => {
      open.delete(outgoing);
      bytesAtRest.set(socket, socket.bytesRead);
      if (closing) closeWhenIdle();
    });
  });
  return {
    begin(): void {
      closing = true;
      // Answers whose headers are still to be written say `Connection: close`; those already
      // under way end their connection when they finish (closeWhenIdle above).
      for (const outgoing of open) if (!outgoing.headersSent) outgoing.shouldKeepAlive = false;
      closeWhenIdle();
    },
    /** Closes the connections of the answers being streamed (their bodies are cancelled and recorded). */
    cutStreams(): void {
      for (const outgoing of open) if (isEventStream(outgoing)) outgoing.destroy();
    },
  };
}

/**
 * Whether an answer is an SSE stream. @hono/node-server passes its headers to writeHead as an
 * object, which Node writes without keeping them for getHeader(): read them from the header
 * block Node built instead.
 */
function isEventStream(outgoing: ServerResponse): boolean {
  const header = (outgoing as ServerResponse & { _header?: string | null })._header;
  return typeof header === "string" && /\r\ncontent-type: *text\/event-stream/i.test(header);
}

/**
 * `Expect: 100-continue` (curl sends it for bodies over 1 MiB): Node would invite the upload at
 * once. A body declared over the limit is not invited; the request goes on without it, and the
 * gateway answers 413 from its Content-Length alone, before a byte is sent.
 */
function answerBeforeUpload(server: Server, maxBodyBytes: number): void {
  server.on("checkContinue", (incoming: IncomingMessage, outgoing: ServerResponse) => {
    if (!(Number(incoming.headers["content-length"]) > maxBodyBytes)) outgoing.writeContinue();
    server.emit("request", incoming, outgoing);
  });
}

/**
 * A stream's response names chunked encoding (sse-response.ts: so that @hono/node-server sends
 * its first bytes at once). HTTP/1.0 has no chunked encoding: for such a client the header is
 * dropped, and the end of the body is the end of the connection.
 */
function streamsForHttp10(server: Server): void {
  server.on("request", (incoming: IncomingMessage, outgoing: ServerResponse) => {
    if (incoming.httpVersionMinor !== 0 || incoming.httpVersionMajor !== 1) return;
    const writeHead = outgoing.writeHead;
    outgoing.writeHead = function (this: ServerResponse, ...args: Parameters<typeof writeHead>) {
      const headers = args.find((arg) => typeof arg === "object" && arg !== null && !Array.isArray(arg)) as Record<string, unknown> | undefined;
      if (headers?.["transfer-encoding"] === "chunked") delete headers["transfer-encoding"];
      return writeHead.apply(this, args);
    } as typeof writeHead;
  });
}
