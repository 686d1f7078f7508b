import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve-config.ts";
import { Ledger } from "../ledger/ledger.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import { buildGateway } from "./create-gateway.ts";

// GET /v1/admin/costs where the ledger cannot answer: a store that keeps no aggregates (the
// Workers entry's log) is a 501 that says where the records are; a store that is down is a 503
// to retry, never a 500 that looks like a tollgate bug.

const ADMIN = "tg_admin_for_reports";
const config = resolveConfig(
  {
    providers: { openai: { type: "openai", apiKey: { env: "K" } } },
    routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] } },
    keys: [],
    admin: { keyHash: `sha256:${createHash("sha256").update(ADMIN).digest("hex")}` },
  },
  { K: "sk" },
);

const logged: string[] = [];

function askFor(store: LedgerStore) {
  logged.length = 0;
  const log = (line: string) => logged.push(line);
  const { app } = buildGateway({ config, ledger: new Ledger({ store, log }), log });
  return app.fetch(new Request("http://gateway/v1/admin/costs?groupBy=team", { headers: { authorization: `Bearer ${ADMIN}` } }));
}

describe("cost reports when the ledger cannot give them", () => {
  it("is a 501 naming where the records are, on a store without aggregates", async () => {
    const response = await askFor({ write: async () => {}, close: async () => {} });
    expect(response.status).toBe(501);
    expect((await response.json()).error).toMatchObject({ code: "reports_unavailable", message: expect.stringContaining("Workers Logs") });
    // Not a gateway failure: nothing for the operator's error log.
    expect(logged).toEqual([]);
  });

  it("is a 503 with retry-after while the store is unreachable", async () => {
    const response = await askFor({ write: async () => {}, close: async () => {}, totals: async () => Promise.reject(new Error("Connection is closed.")) });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect((await response.json()).error).toMatchObject({ code: "ledger_store_unavailable" });
    expect(logged).toEqual([expect.stringContaining("the ledger store is unreachable")]);
  });
});

describe("cost reports asked for by a key that is not the admin's", () => {
  const KEY = "tg_app_key_for_reports";
  const ask = (admin: boolean) => {
    const withKey = resolveConfig(
      {
        providers: { openai: { type: "openai", apiKey: { env: "K" } } },
        routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] } },
        keys: [{ id: "app", team: "search", hash: `sha256:${createHash("sha256").update(KEY).digest("hex")}` }],
        ...(admin ? { admin: config.admin } : {}),
      },
      { K: "sk" },
    );
    const { app } = buildGateway({ config: withKey, log: () => {} });
    return app.fetch(new Request("http://gateway/v1/admin/costs", { headers: { authorization: `Bearer ${KEY}` } }));
  };

  it("is a 403 that says to use the admin key, or how to make one where the config has none", async () => {
    const withAdmin = await ask(true);
    expect(withAdmin.status).toBe(403);
    expect((await withAdmin.json()).error.message).toBe("cost reports show every team's spend: call /v1/admin/costs with the admin key");
    const withoutAdmin = await ask(false);
    expect(withoutAdmin.status).toBe(403);
    expect((await withoutAdmin.json()).error.message).toBe(
      'cost reports show every team\'s spend: this gateway has no admin key yet: `npx tollgate keys create --admin` makes one, and its hash goes in the config\'s "admin"',
    );
  });
});
