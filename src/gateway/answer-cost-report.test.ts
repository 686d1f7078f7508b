import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve-config.ts";
import { Ledger } from "../ledger/ledger.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import { MemoryLedgerStore } from "../ledger/memory-ledger-store.ts";
import { ROWS_PER_PIECE } from "../reports/cost-report.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
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

describe("a report of many rows", () => {
  // A year's report of a large platform is some 70,000 rows: seconds of rendering. Was: the whole
  // body was rendered in one go, and no other answer (no stream's next token) went out meanwhile.
  // Now it is written a piece per turn of the event loop: other work runs between its pieces.
  for (const format of ["json", "csv"]) {
    it(`is written over several turns of the event loop, other work running between (${format})`, async () => {
      const store = new MemoryLedgerStore();
      const rows = 4 * ROWS_PER_PIECE;
      await store.write(Array.from({ length: rows }, (_, index) => makeCostRecord({ requestId: `r${index}`, time: "2026-11-23T08:00:00.000Z", keyId: `key${index}` })));
      const { app } = buildGateway({ config, ledger: new Ledger({ store, log: () => {} }), log: () => {}, now: () => Date.parse("2026-11-23T12:00:00Z") });

      // What another request's work would see: the body's bytes so far, at each turn of the loop.
      let received = 0;
      let reading = true;
      const seenAtTurns = new Set<number>();
      const turn = () => {
        seenAtTurns.add(received);
        if (reading) setImmediate(turn);
      };
      const response = await app.fetch(new Request(`http://gateway/v1/admin/costs?groupBy=key&format=${format}`, { headers: { authorization: `Bearer ${ADMIN}` } }));
      setImmediate(turn);
      let text = "";
      const decoder = new TextDecoder();
      const reader = response.body!.getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        received += chunk.value.length;
        text += decoder.decode(chunk.value, { stream: true });
      }
      reading = false;

      // One turn saw the body empty, the others part-written, one per piece at least.
      expect(seenAtTurns.size).toBeGreaterThanOrEqual(4);
      const count = format === "json" ? (JSON.parse(text) as { rows: unknown[] }).rows.length : text.split("\r\n").length - 2;
      expect(count).toBe(rows);
    });
  }
});

describe("a CSV report whose filter matched nothing", () => {
  // Was: the CSV of `team=serach` (a typo) was a header row and no data, a 200 that said nothing
  // anywhere: the README's `curl … -o costs.csv` filed a $0. The JSON's warnings now come with
  // the CSV as the header x-tollgate-warnings (a line in the file would be read as data).
  const ask = async (filter: string, format: "json" | "csv") => {
    const store = new MemoryLedgerStore();
    await store.write([makeCostRecord({ requestId: "r1", time: "2026-11-23T08:00:00.000Z" })]);
    const { app } = buildGateway({ config, ledger: new Ledger({ store, log: () => {} }), log: () => {}, now: () => Date.parse("2026-11-23T12:00:00Z") });
    return app.fetch(new Request(`http://gateway/v1/admin/costs?groupBy=team&${filter}&format=${format}`, { headers: { authorization: `Bearer ${ADMIN}` } }));
  };

  it("carries the JSON's warnings in x-tollgate-warnings, any name given back as written", async () => {
    const filter = `team=serach&team=search&team=${encodeURIComponent("Zürich\n摘要")}`;
    const { warnings } = (await (await ask(filter, "json")).json()) as { warnings: string[] };
    expect(warnings).toHaveLength(2);
    const csv = await ask(filter, "csv");
    expect(csv.status).toBe(200);
    const header = csv.headers.get("x-tollgate-warnings")!;
    expect(header).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(header)).toEqual(warnings);
    // The file itself is the search team's row only: nothing a spreadsheet would read as data.
    expect((await csv.text()).split("\r\n")[1]).toMatch(/^search,1,/);
  });

  it("has no x-tollgate-warnings when every name matched", async () => {
    expect((await ask("team=search", "csv")).headers.get("x-tollgate-warnings")).toBeNull();
  });

  it("keeps the header well under what clients take, saying how many more there are", async () => {
    const names = Array.from({ length: 300 }, (_, index) => `team=nobody${index}`).join("&");
    const header = (await ask(names, "csv")).headers.get("x-tollgate-warnings")!;
    expect(header.length).toBeLessThanOrEqual(4000);
    const warnings = JSON.parse(header) as string[];
    expect(warnings[0]).toContain('team "nobody0" matches no record');
    expect(warnings.at(-1)).toBe(`and ${300 - (warnings.length - 1)} more filter values match no record: the JSON report lists them all`);
  });
});
