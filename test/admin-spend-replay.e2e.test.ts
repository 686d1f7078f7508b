import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startMockProviders } from "./support/msw/index.ts";
import { ADMIN_KEY, ledgerRecords, postJson, sha256, startTestGateway, testConfig } from "./support/gateway.ts";

// The admin key's spend is charged to no key or team scope, neither by live admission nor by the
// budgets the embedded store rebuilds from the ledger after a restart (its records carry `admin`).
// Was: its records say keyId "admin", team "admin", and the replay charged them by name, so a
// tenant's team called "admin" lost budget (down to 402s) for money it never spent, after a restart.
// And the daily totals (the finance reports' source) added the admin's spend to that team's: the
// records now name the admin key "(admin)", which the config refuses for a key or team.

const OPS_KEY = "tg_test_ops_key_0123456789";

describe("the admin key's spend", () => {
  it("is never charged to a tenant's team called \"admin\", before or after a restart", async () => {
    const mocks = startMockProviders();
    const base = testConfig();
    const config = {
      ...base,
      keys: [...base.keys, { id: "ops-console", team: "admin", hash: sha256(OPS_KEY) }],
      teams: { admin: { budget: { usd: 1, window: "day", mode: "hard" } } },
      store: { path: join(tmpdir(), `tollgate-test-${randomUUID()}`, "ledger.jsonl") },
    };
    const teamSpent = async (gateway: Awaited<ReturnType<typeof startTestGateway>>) => {
      const response = await fetch(`${gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${OPS_KEY}` } });
      const { scopes } = (await response.json()) as { scopes: { scope: string; spentUsd: number }[] };
      return scopes.find((scope) => scope.scope === "team:admin")?.spentUsd;
    };
    try {
      const first = await startTestGateway(config);
      mocks.openai.enqueue({ kind: "text", text: "for the admin", usage: { prompt_tokens: 10, completion_tokens: 5 } });
      const answer = await postJson(first, "/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "hi" }] }, ADMIN_KEY);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("x-tollgate-cost-usd")).toBe("0.000075"); // 10 × 2500 + 5 × 10,000 nano-dollars
      // The team's own key spends too: that IS the team's, before and after the restart, so the
      // rebuilt budget below is shown to be rebuilt, not merely empty.
      mocks.openai.enqueue({ kind: "text", text: "for ops", usage: { prompt_tokens: 4, completion_tokens: 1 } });
      const own = await postJson(first, "/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "hi" }] }, OPS_KEY);
      expect(own.status).toBe(200);
      expect(own.headers.get("x-tollgate-cost-usd")).toBe("0.00002"); // 4 × 2500 + 1 × 10,000 nano-dollars
      await first.ledger.flush();
      // The record still names the admin key as before, and says so.
      expect((await ledgerRecords(first)).map(({ keyId, team, admin }) => ({ keyId, team, admin }))).toEqual([
        { keyId: "(admin)", team: "(admin)", admin: true },
        { keyId: "ops-console", team: "admin", admin: undefined },
      ]);
      const before = await teamSpent(first);
      await first.close();

      const second = await startTestGateway(config);
      const after = await teamSpent(second);
      await second.close();
      // The ops key's 20,000 nano-dollars only, never the admin's 75,000.
      expect(before).toBe(0.00002);
      expect(after).toBe(0.00002);
    } finally {
      mocks.close();
    }
  });
});
