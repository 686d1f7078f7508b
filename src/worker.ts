import exampleConfig from "../config/example.json";
import { resolveConfig, type Environment } from "./config/resolve-config.ts";
import { createGateway } from "./gateway/create-gateway.ts";
import { DurableObjectAdmissionStore } from "./budgets/durable-object-admission-store.ts";
import type { DurableObjectNamespace } from "./budgets/durable-object-types.ts";
import { Ledger } from "./ledger/ledger.ts";
import { LogLedgerStore } from "./ledger/log-ledger-store.ts";
import { timersDieWithRequests } from "./runtime/shared-timers.ts";
import { workerWarnings } from "./worker-warnings.ts";

// Cloudflare Workers entry. The config comes from the TOLLGATE_CONFIG variable (JSON text) or the
// bundled example; provider keys are Worker secrets, read through the same {"env": NAME} names.
// The gateway is built once per isolate, on the first request, because env arrives with it.
// Costs reach clients here as everywhere (headers, the stream's final event), and each cost record
// is one JSON line in the Worker's log (Workers Logs / Logpush keep it): ioredis and files do not
// exist on Workers. Budgets and rate limits live in the TollgateBudgets Durable Object when it is
// bound (wrangler.toml does), else in each isolate's memory (see worker-warnings.ts).
// Token estimates use the byte heuristic, since bundling js-tiktoken's 2 MB of ranks into every
// Worker would cost more than it gives.

type WorkerEnv = Environment & {
  TOLLGATE_CONFIG?: string;
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
      const config = resolveConfig(env.TOLLGATE_CONFIG ? JSON.parse(env.TOLLGATE_CONFIG) : exampleConfig, env);
      for (const warning of workerWarnings(config, { sharedBudgets: env.TOLLGATE_BUDGETS !== undefined })) console.warn(warning);
      // Written at once, inside the request: a Worker may not run work left for after its response.
      const ledger = new Ledger({ store: new LogLedgerStore(), log: console.error, schedule: (flush) => flush() });
      const admissionStore = env.TOLLGATE_BUDGETS ? new DurableObjectAdmissionStore(env.TOLLGATE_BUDGETS) : undefined;
      gateway = createGateway({ config, ledger, keepAlive: (c, work) => c.executionCtx.waitUntil(work), ...(admissionStore ? { admissionStore } : {}) });
    }
    return gateway.fetch(request, env, context as never);
  },
};
