import exampleConfig from "../config/example.json";
import { ConfigError, resolveConfig, type Environment } from "./config/resolve-config.ts";
import { createGateway, dialectOf, errorResponse } from "./gateway/create-gateway.ts";
import { newRequestId } from "./gateway/request-id.ts";
import { GatewayError } from "./errors/gateway-error.ts";
import { DurableObjectAdmissionStore } from "./budgets/durable-object-admission-store.ts";
import type { DurableObjectNamespace } from "./budgets/durable-object-types.ts";
import { Ledger } from "./ledger/ledger.ts";
import { LogLedgerStore } from "./ledger/log-ledger-store.ts";
import { timersDieWithRequests } from "./runtime/shared-timers.ts";
import { workerWarnings } from "./worker-warnings.ts";

// Cloudflare Workers entry. The config comes from the TOLLGATE_CONFIG variable (JSON text, or a
// JSON value: wrangler.toml's [vars] may hold the config as a table);
// provider keys are Worker secrets, read through the same {"env": NAME} names. Without it the
// Worker refuses every request with a 503 saying what to set: the bundled example accepts the
// public demo key, and a Worker is on the internet from its first deploy (there is no localhost
// to keep it to, as `npm start` does), so it serves the example only when
// TOLLGATE_EXAMPLE_CONFIG is "allow" (a trial with `wrangler dev`).
// The gateway is built once per isolate, on the first request, because env arrives with it.
// Costs reach clients here as everywhere (headers, the stream's final event), and each cost record
// is one JSON line in the Worker's log (Workers Logs / Logpush keep it): ioredis and files do not
// exist on Workers. Budgets and rate limits live in the TollgateBudgets Durable Object when it is
// bound (wrangler.toml does), else in each isolate's memory (see worker-warnings.ts).
// Token estimates use the byte heuristic, since bundling js-tiktoken's 2 MB of ranks into every
// Worker would cost more than it gives.

type WorkerEnv = Environment & {
  TOLLGATE_CONFIG?: string | object;
  /** "allow": serve the bundled example config (and its demo key) when TOLLGATE_CONFIG is not set. */
  TOLLGATE_EXAMPLE_CONFIG?: string;
  /** The TollgateBudgets Durable Object (wrangler.toml binds it): budgets shared by every isolate. */
  TOLLGATE_BUDGETS?: DurableObjectNamespace;
};

// Workers find a Durable Object class among the main module's exports.
export { TollgateBudgets } from "./budgets/budgets-object.ts";

let gateway: ReturnType<typeof createGateway> | undefined;
/** Why this isolate cannot serve (no config, or one that does not resolve): answered to every request. */
let refusal: GatewayError | undefined;

// A Worker cancels a request's timers when it ends: every request keeps its own.
timersDieWithRequests();

export default {
  fetch(request: Request, env: WorkerEnv, context: unknown): Response | Promise<Response> {
    if (!gateway && !refusal) {
      try {
        gateway = buildFromEnv(env);
      } catch (error) {
        refusal = refusalFor(error);
      }
    }
    if (refusal) return refuse(request, refusal);
    return gateway!.fetch(request, env, context as never);
  },
};

/** The gateway for this isolate's env; throws when the config is missing or does not resolve. */
function buildFromEnv(env: WorkerEnv): ReturnType<typeof createGateway> {
  if (!env.TOLLGATE_CONFIG && env.TOLLGATE_EXAMPLE_CONFIG !== "allow") throw NOT_CONFIGURED;
  let text: unknown = exampleConfig;
  if (typeof env.TOLLGATE_CONFIG === "object" && env.TOLLGATE_CONFIG !== null) text = env.TOLLGATE_CONFIG;
  else if (env.TOLLGATE_CONFIG) {
    try {
      text = JSON.parse(env.TOLLGATE_CONFIG);
    } catch (error) {
      throw new ConfigError([`TOLLGATE_CONFIG is not JSON (${(error as Error).message}): set it to the config file's text`]);
    }
  }
  const config = resolveConfig(redisNotRequired(text), env);
  for (const warning of workerWarnings(config, { sharedBudgets: env.TOLLGATE_BUDGETS !== undefined })) console.warn(warning);
  if (!env.TOLLGATE_CONFIG) console.warn("[tollgate] warning: serving the bundled example config (TOLLGATE_EXAMPLE_CONFIG = \"allow\"): anyone who can reach this Worker may use the public demo key `tollgate-dev-key`");
  // Written at once, inside the request: a Worker may not run work left for after its response.
  const ledger = new Ledger({ store: new LogLedgerStore(), log: console.error, schedule: (flush) => flush() });
  const admissionStore = env.TOLLGATE_BUDGETS ? new DurableObjectAdmissionStore(env.TOLLGATE_BUDGETS) : undefined;
  return createGateway({ config, ledger, holdOpen: (c, work) => c.executionCtx.waitUntil(work), ...(admissionStore ? { admissionStore } : {}) });
}

const NOT_CONFIGURED = new GatewayError(
  "unavailable",
  'tollgate has no config: set the TOLLGATE_CONFIG variable to the config\'s JSON (wrangler.toml [vars] or the dashboard), or TOLLGATE_EXAMPLE_CONFIG = "allow" to try the bundled example, which accepts the public demo key',
  // Until the config changes it answers every request the same: the SDKs must not retry it.
  { code: "not_configured", permanent: true },
);

/**
 * What every request is told when the isolate cannot serve, logged once here. A config that does
 * not resolve is where the Node server would refuse to start; its details (paths, variable names,
 * hosts) go to the Worker's log only, not to whoever on the internet sends a request.
 */
function refusalFor(error: unknown): GatewayError {
  if (error === NOT_CONFIGURED) {
    console.error(`[tollgate] error: ${NOT_CONFIGURED.message}`);
    return NOT_CONFIGURED;
  }
  console.error(`[tollgate] error: cannot start: ${error instanceof ConfigError ? error.message : ((error as Error)?.stack ?? String(error))}`);
  return new GatewayError("unavailable", "tollgate cannot start: its config (TOLLGATE_CONFIG, or a secret it names) is invalid; the Worker's log says what to fix", { code: "invalid_config", permanent: true });
}

/**
 * Redis is not used on Workers (worker-warnings.ts says so): a config shared with Node servers
 * may name a Redis variable the Worker does not have, which must not stop it.
 */
function redisNotRequired(config: unknown): unknown {
  const store = (config as { store?: unknown } | null)?.store;
  if (typeof store !== "object" || store === null || Array.isArray(store)) return config;
  return { ...(config as object), store: { ...store, optional: true } };
}

/** In the client's dialect, as the gateway answers: by path first, then by header. */
function refuse(request: Request, error: GatewayError): Response {
  return errorResponse(dialectOf(new URL(request.url).pathname, request.headers), error, newRequestId());
}
