import { describe, expect, it } from "vitest";
import { Admission } from "../../src/budgets/admission.ts";
import { MemoryAdmissionStore } from "../../src/budgets/memory-admission-store.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { renderBudgets } from "../../src/gateway/render-budgets.ts";
import { PriceBook } from "../../src/metering/price-book.ts";

// GET /v1/budgets: "the admin key sees all". Built from the routes each KEY may use, the
// admin's list missed a route budget on a route no key may use (keys yet to be added), and every
// route budget when the config had no keys; and a key budget of a key that may use no route
// (`"routes": []`, a key taken off every route while its month's spend is still on record).

const config = resolveConfig(
  {
    providers: { openai: { type: "openai", apiKey: { env: "K" } } },
    routes: {
      gpt: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 5, window: "day" } },
      internal: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 50, window: "month" } },
    },
    keys: [
      { id: "app", team: "search", hash: `sha256:${"a".repeat(64)}`, routes: ["gpt"] },
      { id: "parked", team: "search", hash: `sha256:${"c".repeat(64)}`, routes: [], budget: { usd: 20, window: "month" } },
    ],
    admin: { keyHash: `sha256:${"b".repeat(64)}` },
  },
  { K: "sk" },
);

describe("GET /v1/budgets for the admin key", () => {
  it("lists every budget scope in the config", async () => {
    const store = new MemoryAdmissionStore();
    const admission = new Admission({ config, store, prices: new PriceBook(config.providers) });
    const body = await renderBudgets(config, admission, store, { kind: "admin" }, Date.parse("2026-11-22T12:00:00Z"));
    expect(body.scopes.map((scope) => scope.scope)).toEqual(["key:parked", "route:gpt", "route:internal"]);
  });
});
