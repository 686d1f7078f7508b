import { Hono } from "hono";
import { createAuthenticator, mayUseRoute } from "../auth/authenticate.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { anthropicDialect, openAIDialect, type Dialect } from "../dialects/dialect.ts";
import { GatewayError, OVERLOADED, toGatewayError } from "../errors/gateway-error.ts";
import { Ledger } from "../ledger/ledger.ts";
import { MemoryLedgerStore } from "../ledger/memory-ledger-store.ts";
import { Metering } from "../metering/metering.ts";
import { approximateTokenCounter, type TokenCounter } from "../metering/token-counter.ts";
import type { TransportOptions } from "../model/chat-model.ts";
import { MemoryKeyValueStore } from "../store/memory-key-value-store.ts";
import type { KeyValueStore } from "../store/key-value-store.ts";
import { PolicyChain } from "../../policies/policy-chain.ts";
import { Admission } from "../budgets/admission.ts";
import type { AdmissionStore } from "../budgets/admission-store.ts";
import { MemoryAdmissionStore } from "../budgets/memory-admission-store.ts";
import { renderBudgets } from "./render-budgets.ts";
import { createGatewayTelemetry, type GatewayTelemetry } from "../telemetry/gateway-telemetry.ts";
import { createChatModels } from "../routing/create-chat-models.ts";
import type { Context } from "hono";
import type { GatewayEnv } from "./gateway-context.ts";
import { CheapestFirst } from "../routing/cheapest-first.ts";
import { httpServerSpan } from "../telemetry/http-server-span.ts";
import { createChatHandler } from "./handle-chat.ts";
import { createCountTokensHandler } from "./handle-count-tokens.ts";
import { newRequestId } from "./request-id.ts";
import { jsonResponse } from "./json-response.ts";
import { renderModel, renderModelList } from "./render-model-list.ts";
import { answerCostReport } from "./answer-cost-report.ts";
import { DASHBOARD_PATHS, mountDashboard } from "../admin/dashboard.ts";

export type GatewayOptions = {
  config: ResolvedConfig;
  /** How adapters reach providers; the Node entry passes a keep-alive dispatcher. */
  transport?: TransportOptions;
  log?: (line: string) => void;
  /** Where cost records go; the Node entry passes a file or Redis ledger. Default: memory only. */
  ledger?: Ledger;
  /** Counts tokens a provider did not report; the Node entry passes js-tiktoken. */
  counter?: TokenCounter;
  /** Spans and metrics; create it after any OpenTelemetry SDK is registered. */
  telemetry?: GatewayTelemetry;
  /** Shared short-lived state of the policies (prefix sightings, cached answers). Default: memory. */
  store?: KeyValueStore;
  /** Budgets' and rate limits' state. Default: this process's memory. */
  admissionStore?: AdmissionStore;
  /** The clock budgets' windows, rate limits and count_tokens' retry of a decoder read (tests inject one). */
  now?: () => number;
  /**
   * Holds the request open for work that goes on after its answer (settling a budget). The
   * Workers entry passes the execution context's waitUntil, since a Worker may otherwise cancel
   * such work; on Node the process outlives the request, and the default does nothing.
   */
  holdOpen?: (c: Context<GatewayEnv>, work: Promise<unknown>) => void;
  /**
   * Closes the connection of a client whose stream was cut because it took no bytes for
   * `server.streamSendTimeoutSeconds`. The Node entry destroys the socket (its writer waits for a
   * drain that will not come, so an errored body alone would leave the socket open). Without it
   * the body is errored, and the runtime ends the response as cut off.
   */
  dropClient?: (c: Context<GatewayEnv>) => void;
  /**
   * The host's stop, where it has one (the Node server): once aborted, every stream still running
   * ends with an error event saying the gateway stopped (see src/routing/call-deadlines.ts). A
   * Worker has none: workerd ends nothing of a request's on its own.
   */
  stop?: AbortSignal;
};

/**
 * Every path the gateway serves, and the method it takes: another method on one of these paths
 * is a 405, not a 404. One route's model (`/v1/models/{model}`) is a template, handled apart.
 * The order is the 404's list of endpoints (SERVED).
 */
const ENDPOINT_METHODS = new Map([
  ["/v1/chat/completions", "POST"],
  ["/v1/messages", "POST"],
  ["/v1/messages/count_tokens", "POST"],
  ["/v1/models", "GET"],
  ["/v1/budgets", "GET"],
  ["/v1/admin/costs", "GET"],
  ...DASHBOARD_PATHS.map((path) => [path, "GET"] as const),
  ["/healthz", "GET"],
]);

/**
 * What the 404 for an unknown path says tollgate serves: the endpoints above, with one route's
 * model after the list, and the dashboard by its page alone (DASHBOARD_PATHS' first: its script
 * and style are the page's to ask for).
 */
const SERVED = [...ENDPOINT_METHODS]
  .flatMap(([path, method]) => {
    if (path === DASHBOARD_PATHS[0]) return [`${method} ${path} (the cost dashboard)`];
    if (DASHBOARD_PATHS.includes(path)) return [];
    return path === "/v1/models" ? [`${method} ${path}`, `${method} /v1/models/{route}`] : [`${method} ${path}`];
  })
  .join(", ");

/**
 * The path's template (`http.route`) where the gateway serves it, else undefined: a span names
 * any other path by its method only (bounded cardinality).
 */
function spanRoute(path: string): string | undefined {
  if (ENDPOINT_METHODS.has(path)) return path;
  // One route's model: the template, never the id, names the span.
  return path.startsWith("/v1/models/") && path.length > "/v1/models/".length ? "/v1/models/{model}" : undefined;
}

/** The gateway as a Hono app: Web-standard Request in, Response out, on any runtime. */
export function createGateway(options: GatewayOptions): Hono<GatewayEnv> {
  return buildGateway(options).app;
}

/** What the routes are served with, wired once per gateway from its options. */
type GatewayDeps = {
  config: ResolvedConfig;
  log: (line: string) => void;
  ledger: Ledger;
  telemetry: GatewayTelemetry;
  admission: Admission;
  admissionStore: AdmissionStore;
  metering: Metering;
  slots: ReturnType<typeof createChatModels>;
  now: () => number;
  authenticate: ReturnType<typeof createAuthenticator>;
  handleChat: ReturnType<typeof createChatHandler>;
  handleCountTokens: ReturnType<typeof createCountTokensHandler>;
};

/**
 * The app, and what a host needs at shutdown besides it: to wait for the records of requests it
 * cut off. Kept beside the app rather than added to the Hono instance, which every request goes
 * through (a property added to it measured slower once in `bench/compare-cpu.ts`, though within
 * that machine's noise when measured again).
 */
export function buildGateway(options: GatewayOptions) {
  const deps = wireGateway(options);
  const app = new Hono<GatewayEnv>();
  mountRequestFrame(app, deps);
  mountApiRoutes(app, deps);
  return {
    app,
    recorded: (timeoutMs: number): Promise<boolean> => deps.metering.recorded(timeoutMs),
    /** At shutdown: the budget settlements still retrying, tried once more; those left over (see Admission.finishSettling). */
    finishSettling: () => deps.admission.finishSettling(),
  };
}

/** The gateway's parts, each given what it depends on; an option left out gets its default here. */
function wireGateway({
  config,
  transport = {},
  log = console.error,
  ledger = new Ledger({ store: new MemoryLedgerStore(), log }),
  counter = approximateTokenCounter,
  telemetry = createGatewayTelemetry({ captureContent: config.telemetry?.captureContent ?? false }),
  store = new MemoryKeyValueStore(),
  admissionStore = new MemoryAdmissionStore(),
  now = Date.now,
  holdOpen = () => {},
  dropClient,
  stop,
}: GatewayOptions): GatewayDeps {
  const authenticate = createAuthenticator(config.keys, config.admin?.keyHash);
  const slots = createChatModels(config.providers, transport, stop);
  const metering = new Metering({ config, ledger, counter, telemetry, log });
  const policies = new Map(
    Object.entries(config.routes).map(([name, route]) => [name, PolicyChain.forRoute(route.policies, config.policyOrder[name] ?? [], store)]),
  );
  const admission = new Admission({
    config,
    store: admissionStore,
    prices: metering.prices,
    now,
    log,
    onSoftExceeded: (scope) => telemetry.recordSoftBudgetExceeded(scope),
  });
  const order = new CheapestFirst(config, metering.prices);
  const handleChat = createChatHandler({ config, admission, log, slots, order, metering, policies, store, counter, holdOpen, dropClient });
  const handleCountTokens = createCountTokensHandler({ config, slots, order, policies, store, counter, telemetry, now });
  return { config, log, ledger, telemetry, admission, admissionStore, metering, slots, now, authenticate, handleChat, handleCountTokens };
}

/** What every request goes through: its id, dialect and span, and its errors and unknown paths answered. */
function mountRequestFrame(app: Hono<GatewayEnv>, { telemetry, log }: GatewayDeps): void {
  app.use(async function requestContext(c, next) {
    const requestId = newRequestId();
    c.set("requestId", requestId);
    c.set("receivedAt", performance.now());
    const path = c.req.path;
    c.set("dialect", dialectOf(path, c.req.raw.headers));
    const server = httpServerSpan(c.req.method, path, spanRoute(path), c.req.url);
    server.attributes["tollgate.request_id"] = requestId;
    // A client's W3C traceparent makes this span a child of the client's own.
    const span = telemetry.startRequestSpan(server.name, server.attributes, c.req.raw.headers);
    const holder = { span, handedOff: false };
    c.set("requestSpan", holder);
    try {
      await next();
    } finally {
      if (!holder.handedOff) telemetry.endRequestSpan(span, { httpStatus: c.res.status });
    }
  });

  app.onError(function renderError(error, c) {
    const gatewayError = toGatewayError(error);
    // A client that went away is not a gateway failure: its upstream call was aborted on purpose.
    // Nor is an endpoint this runtime does not offer (501), asked for again by every dashboard load.
    if (gatewayError.status >= 500 && gatewayError.kind !== "not_implemented" && !c.req.raw.signal.aborted) log(`[tollgate] ${c.get("requestId")} ${gatewayError.kind}: ${gatewayError.message}${causeOf(gatewayError)}`);
    return errorResponse(c.get("dialect") ?? openAIDialect, gatewayError, c.get("requestId"));
  });

  app.notFound(function notFound(c) {
    // A served path asked with another method: 405 with the method it takes (RFC 9110 §15.5.6).
    const allow = ENDPOINT_METHODS.get(c.req.path) ?? (c.req.path.startsWith("/v1/models/") ? "GET" : undefined);
    // `GET /v1/models/` (the SDKs' retrieve("")) names no model: a 404 below, not a 405 "takes GET, not GET".
    const gotIt = allow === "GET" && (c.req.method === "GET" || c.req.method === "HEAD");
    if (allow && !gotIt) {
      const error = new GatewayError("method_not_allowed", `${c.req.path} takes ${allow}, not ${c.req.method}: send the request with ${allow}`);
      return jsonResponse(c.get("dialect").renderError(error, c.get("requestId")), error.status, c.get("requestId"), { allow: allow === "GET" ? "GET, HEAD" : allow });
    }
    // Not "model_not_found" (the default code of a 404, for an unknown route): this is a path.
    throw new GatewayError("not_found", `no such endpoint: ${c.req.method} ${c.req.path}; ${hintFor(c.req.path)}tollgate serves ${SERVED}`, {
      code: "unknown_endpoint",
    });
  });
}

/** The endpoints (ENDPOINT_METHODS): health and the dashboard open, everything under /v1 behind a key. */
function mountApiRoutes(app: Hono<GatewayEnv>, { config, ledger, admission, admissionStore, slots, now, authenticate, handleChat, handleCountTokens }: GatewayDeps): void {
  // Liveness: always 200 while the process answers. A store outage is no reason to restart a
  // gateway (it serves routes without budgets and keeps its records to write them later), but a
  // monitor should see it: `degraded`, how many records wait, and whether the last admission
  // reached the budget store (a gateway whose every route is budgeted records nothing meanwhile).
  app.get("/healthz", (c) =>
    jsonResponse(
      {
        status: ledger.failing || admission.storeUnreachable ? "degraded" : "ok",
        providers: Object.fromEntries([...slots].map(([name, slot]) => [name, "model" in slot ? "ready" : "unavailable"])),
        ledger: { writes: ledger.failing ? "failing" : "ok", pendingRecords: ledger.pending },
        budgets: { store: admission.storeState },
      },
      200,
      c.get("requestId"),
    ),
  );
  mountDashboard(app);

  app.use("/v1/*", async function authenticateCaller(c, next) {
    try {
      c.set("caller", await authenticate(c.req.raw.headers));
    } catch (error) {
      throw forAdminPath(c.req.path, error);
    }
    await next();
  });

  app.get("/v1/models", (c) => {
    const caller = c.get("caller");
    const routes = Object.keys(config.routes).filter((route) => mayUseRoute(caller, route));
    const page = { limit: c.req.query("limit"), afterId: c.req.query("after_id"), beforeId: c.req.query("before_id") };
    return jsonResponse(renderModelList(config, routes, page), 200, c.get("requestId"));
  });
  // A route the key may not use is not there for it, as in the list: a 404, not a 403 that
  // would tell the key which routes exist.
  app.get("/v1/models/:id{.+}", (c) => {
    const id = c.req.param("id");
    if (!Object.hasOwn(config.routes, id) || !mayUseRoute(c.get("caller"), id)) {
      throw new GatewayError("not_found", `no model "${id}" for this key: GET /v1/models lists the routes it may use`, { param: "model", code: "model_not_found" });
    }
    return jsonResponse(renderModel(config, id), 200, c.get("requestId"));
  });
  app.get("/v1/budgets", async (c) => jsonResponse(await renderBudgets(config, admission, admissionStore, c.get("caller"), now()), 200, c.get("requestId")));
  app.get("/v1/admin/costs", (c) => answerCostReport(c, ledger, now(), config.admin !== undefined));
  app.post("/v1/chat/completions", handleChat);
  app.post("/v1/messages", handleChat);
  app.post("/v1/messages/count_tokens", handleCountTokens);
}

/**
 * The dialect a request's errors are written in. The chat endpoints say it by their path; the
 * shared ones (`/v1/models`, `/v1/budgets`, unknown paths) go by the header every Anthropic SDK
 * sends, so `client.models.list()` with a bad key fails with an error that SDK can read.
 */
export function dialectOf(path: string, headers: Headers): Dialect {
  if (path.startsWith("/v1/messages")) return anthropicDialect;
  if (path.startsWith("/v1/chat/")) return openAIDialect;
  return headers.has("anthropic-version") ? anthropicDialect : openAIDialect;
}

/**
 * What to change where a client library called an endpoint tollgate does not serve by its own
 * default: the Vercel AI SDK's `openai(model)` and LangChain's ChatOpenAI (for some model names)
 * call OpenAI's Responses API.
 */
function hintFor(path: string): string {
  if (path === "/v1/responses" || path.startsWith("/v1/responses/")) {
    return "OpenAI's Responses API is not served: use Chat Completions (the Vercel AI SDK: openai.chat(route) instead of openai(route); LangChain's ChatOpenAI: useResponsesApi: false); ";
  }
  return "";
}

/**
 * The admin endpoints' 401 says which key they take: the general hint (make a virtual key) sends
 * the person at the dashboard the wrong way.
 */
function forAdminPath(path: string, error: unknown): unknown {
  if (!path.startsWith("/v1/admin/") || !(error instanceof GatewayError) || error.kind !== "authentication") return error;
  const missing = error.code !== "invalid_api_key";
  return new GatewayError("authentication", `${missing ? "missing API key" : "invalid API key"}: ${path} takes the admin key (\`npx tollgate keys create --admin\` makes one; its hash goes in the config's "admin")`, { code: error.code });
}

export function errorResponse(dialect: Dialect, error: GatewayError, requestId: string): Response {
  const headers: Record<string, string> = error.retryAfterSeconds !== undefined ? { "retry-after": String(error.retryAfterSeconds) } : {};
  if (error.permanent) headers["x-should-retry"] = "false";
  // Anthropic answers an overloaded model with 529, which its SDK raises as OverloadedError.
  const status = dialect.name === "anthropic" && error.code === OVERLOADED ? 529 : error.status;
  return jsonResponse(dialect.renderError(error, requestId), status, requestId, headers);
}

/**
 * The stack of a tollgate bug, for whoever fixes it. Provider failures are logged by their
 * scrubbed message only: an SDK error's own message can quote part of the provider key.
 */
function causeOf(error: GatewayError): string {
  const cause = error.cause as Error | undefined;
  if (error.kind === "internal" && cause?.stack) return `\n${cause.stack}`;
  return error.logDetail ? ` (${error.logDetail})` : "";
}
