import { describe, expect, it } from "vitest";
import { resolveConfig } from "./config/resolve-config.ts";
import { workerWarnings } from "./worker-warnings.ts";

const base = {
  providers: { local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:8080/v1" } },
  routes: { local: { targets: [{ provider: "local", model: "m" }] } },
  keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
};

/** A Worker without the TOLLGATE_BUDGETS Durable Object binding. */
const isolateOnly = { sharedBudgets: false };

describe("what the Workers entry warns about", () => {
  it("says where cost records go, even with nothing else configured", () => {
    expect(workerWarnings(resolveConfig(base, {}), isolateOnly)).toEqual([
      `[tollgate] note: on Workers, each cost record is one JSON line in the Worker's log ({"type":"tollgate.cost_record","record":{…}}); keep them with Workers Logs or Logpush`,
    ]);
  });

  it.each([
    ["a route budget", { ...base, routes: { local: { ...base.routes.local, budget: { usd: 5, window: "day" } } } }],
    ["a key's rate limit", { ...base, keys: [{ ...base.keys[0], rateLimit: { rpm: 60 } }] }],
    ["a team budget", { ...base, teams: { search: { budget: { usd: 50, window: "month" } } } }],
  ])("says that limits hold per isolate only, given %s", (_, config) => {
    expect(workerWarnings(resolveConfig(config, {}), isolateOnly).join("\n")).toContain("budgets and rate limits are enforced per isolate: several isolates together can spend past a limit");
    // With the Durable Object bound, they hold across isolates: nothing to warn about.
    expect(workerWarnings(resolveConfig(config, {}), { sharedBudgets: true }).join("\n")).not.toContain("per isolate");
  });

  it("says that a configured Redis is not used there, along with the config's own warnings", () => {
    const warnings = workerWarnings(resolveConfig({ ...base, store: { redisUrl: { env: "REDIS_URL" } } }, { REDIS_URL: "redis://10.0.0.5:6379" }), isolateOnly);
    expect(warnings[0]).toBe("[tollgate] warning: store.redisUrl is not used on Workers; budgets and rate limits stay in this isolate's memory, cost records go to the Worker's log");
    const unset = workerWarnings(resolveConfig({ ...base, store: { redisUrl: { env: "REDIS_URL" }, optional: true } }, {}), isolateOnly);
    expect(unset[0]).toBe("[tollgate] warning: store.redisUrl: REDIS_URL is not set; using the embedded store");
  });
});
