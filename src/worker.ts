import exampleConfig from "../config/example.json";
import { resolveConfig, type Environment } from "./config/resolve-config.ts";
import { createGateway } from "./gateway/create-gateway.ts";
import { renderAnthropicError } from "./dialects/anthropic/render-anthropic-error.ts";
import { renderOpenAIError } from "./dialects/openai/render-openai-error.ts";
import { GatewayError } from "./errors/gateway-error.ts";
import { DurableObjectAdmissionStore } from "./budgets/durable-object-admission-store.ts";
import type { DurableObjectNamespace } from "./budgets/durable-object-types.ts";
import { Ledger } from "./ledger/ledger.ts";
import { LogLedgerStore } from "./ledger/log-ledger-store.ts";
import { timersDieWithRequests } from "./runtime/shared-timers.ts";
import { workerWarnings } from "./worker-warnings.ts";

// Cloudflare Workers entry. The config comes from the TOLLGATE_CONFIG variable (JSON text);
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
  TOLLGATE_CONFIG?: string;
  /** "allow": serve the bundled example config (and its demo key) when TOLLGATE_CONFIG is not set. */
  TOLLGATE_EXAMPLE_CONFIG?: string;
  /** The TollgateBudgets Durable Object (wrangler.toml binds it): budgets shared by every isolate. */
  TOLLGATE_BUDGETS?: DurableObjectNamespace;
};

// Workers find a Durable Object class among the main module's exports.
export { TollgateBudgets } from "./budgets/budgets-object.ts";

let gateway: ReturnType<typeof createGateway> | undefined;

// A Worker cancels a request's timers when it ends: every request keeps its own.
timersDieWithRequests();

export default {
  fetch(request: Request, env: WorkerEnv, context: unknown): Response | Promise<Response> {
    if (!gateway) {
      if (!env.TOLLGATE_CONFIG && env.TOLLGATE_EXAMPLE_CONFIG !== "allow") return notConfigured(request);
      const config = resolveConfig(env.TOLLGATE_CONFIG ? JSON.parse(env.TOLLGATE_CONFIG) : exampleConfig, env);
      for (const warning of workerWarnings(config, { sharedBudgets: env.TOLLGATE_BUDGETS !== undefined })) console.warn(warning);
      if (!env.TOLLGATE_CONFIG) console.warn("[tollgate] warning: serving the bundled example config (TOLLGATE_EXAMPLE_CONFIG = \"allow\"): anyone who can reach this Worker may use the public demo key `tollgate-dev-key`");
      // Written at once, inside the request: a Worker may not run work left for after its response.
      const ledger = new Ledger({ store: new LogLedgerStore(), log: console.error, schedule: (flush) => flush() });
      const admissionStore = env.TOLLGATE_BUDGETS ? new DurableObjectAdmissionStore(env.TOLLGATE_BUDGETS) : undefined;
      gateway = createGateway({ config, ledger, keepAlive: (c, work) => c.executionCtx.waitUntil(work), ...(admissionStore ? { admissionStore } : {}) });
    }
    return gateway.fetch(request, env, context as never);
  },
};

const NOT_CONFIGURED = new GatewayError(
  "unavailable",
  'tollgate has no config: set the TOLLGATE_CONFIG variable to the config\'s JSON (wrangler.toml [vars] or the dashboard), or TOLLGATE_EXAMPLE_CONFIG = "allow" to try the bundled example, which accepts the public demo key',
  { code: "not_configured" },
);

function notConfigured(request: Request): Response {
  console.error(`[tollgate] error: ${NOT_CONFIGURED.message}`);
  const body = request.headers.has("anthropic-version") ? renderAnthropicError(NOT_CONFIGURED) : renderOpenAIError(NOT_CONFIGURED);
  return Response.json(body, { status: NOT_CONFIGURED.status });
}
