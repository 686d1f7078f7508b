import { parse } from "csv-parse/sync";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileLedgerStore } from "../ledger/file-ledger-store.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import { MemoryLedgerStore } from "../ledger/memory-ledger-store.ts";
import { RedisLedgerStore } from "../ledger/redis-ledger-store.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { useRedis } from "../../test/support/use-redis.ts";
import { buildCostReport, costReportJsonPieces, type CostReport, type renderMetrics, type ReportRow } from "./cost-report.ts";
import { parseCostReportQuery, type ReportDimension } from "./cost-report-query.ts";
import { costCsvPieces } from "./render-cost-csv.ts";

// The same records in each store that keeps aggregates (memory, the embedded file, real Redis),
// and the same reports from each: sums worked out by hand, compared to the nano-dollar.

const redis = useRedis("cost-report");
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tollgate-cost-report-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const usage = (inputTokens: number, outputTokens: number, more: object = {}) => ({ inputTokens, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens, reasoningTokens: 0, ...more });
const cost = (totalNano: number, cacheSavingsNano = 0) => ({ inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: totalNano, totalNano, cacheSavingsNano });

const claude = { keyId: "limited", team: "billing", route: "claude", provider: "anthropic", model: "claude-sonnet-4-6" };
const records = [
  // 21st: the default record (gpt-4o, 176 + 1024 cached in, 42 out, 2,140,000 nano, 1,280,000 saved).
  makeCostRecord({ requestId: "r1", time: "2026-11-21T23:59:59.999Z" }),
  makeCostRecord({ requestId: "r2", time: "2026-11-22T00:00:00.000Z", usage: usage(10, 5), cost: cost(1_000_001) }),
  // A failed Claude request, and the billed call before its fallback (part of its spend, not a request).
  makeCostRecord({ requestId: "r3", time: "2026-11-22T12:00:00.000Z", ...claude, status: "error", usage: usage(7, 0, { cacheWrite1hTokens: 100 }), cost: cost(3_000_000_007) }),
  makeCostRecord({ requestId: "r3#1", attemptOf: "r3", time: "2026-11-22T12:00:00.000Z", ...claude, usage: usage(3, 0), cost: cost(500), estimated: true }),
  makeCostRecord({ requestId: "r5", time: "2026-11-23T08:00:00.000Z", usage: usage(1, 1), cost: cost(9) }),
];

const stores: { name: string; open: (label: string) => Promise<LedgerStore> }[] = [
  { name: "memory", open: async () => new MemoryLedgerStore() },
  { name: "file", open: async (label) => FileLedgerStore.open(join(dir, `${label}.jsonl`)) },
  { name: "Redis", open: async (label) => new RedisLedgerStore(redis.redis, `${redis.prefix}${label}:`) },
];

async function report(store: LedgerStore, params: Record<string, string[]>) {
  const query = parseCostReportQuery(params, "2026-11-23");
  return buildCostReport(query, (day) => store.totals!(day));
}

type RenderedMetrics = ReturnType<typeof renderMetrics>;
type ReportJson = { from: string; to: string; groupBy: ReportDimension[]; rows: (ReportRow["dimensions"] & RenderedMetrics)[]; totals: RenderedMetrics; warnings?: string[] };

/** The JSON answer as the gateway writes it (GET /v1/admin/costs), parsed. */
function reportJson(built: CostReport): ReportJson {
  return JSON.parse([...costReportJsonPieces(built)].join(""));
}

/** The CSV answer as the gateway writes it (?format=csv). */
function reportCsv(built: CostReport): string {
  return [...costCsvPieces(built)].join("");
}

describe.each(stores)("cost report from the $name store", ({ name, open }) => {
  let store: LedgerStore;
  beforeAll(async () => {
    store = await open(`main-${name}`);
    await store.write(records);
    // A retried write of a record that landed: counted once.
    await store.write([records[1]!]);
  });

  it("groups by every dimension by default, day by day, sorted, with exact totals", async () => {
    const body = reportJson(await report(store, { from: ["2026-11-21"], to: ["2026-11-22"] }));
    expect(body.groupBy).toEqual(["day", "team", "key", "route", "provider", "model"]);
    expect(body.rows.map((row) => [row.day, row.team, row.key, row.route, row.provider, row.model, row.requests, row.errors, row.costNano, row.costUsd])).toEqual([
      ["2026-11-21", "search", "app", "gpt", "openai", "gpt-4o", 1, 0, "2140000", "0.00214"],
      // 3,000,000,007 + 500 from the billed attempt, which adds no request.
      ["2026-11-22", "billing", "limited", "claude", "anthropic", "claude-sonnet-4-6", 1, 1, "3000000507", "3.000000507"],
      ["2026-11-22", "search", "app", "gpt", "openai", "gpt-4o", 1, 0, "1000001", "0.001000001"],
    ]);
    expect(body.rows[1]).toMatchObject({ inputTokens: 10, cacheWrite1hTokens: 100, outputTokens: 0, estimated: 1 });
    expect(body.rows[0]).toMatchObject({ inputTokens: 176, cacheReadTokens: 1024, outputTokens: 42, cacheSavingsNano: "1280000", cacheSavingsUsd: "0.00128" });
    // 2,140,000 + 3,000,000,507 + 1,000,001.
    expect(body.totals).toMatchObject({ requests: 3, errors: 1, costNano: "3003140508", costUsd: "3.003140508", inputTokens: 196, outputTokens: 47, estimated: 1 });
  });

  it("groups by the dimensions asked for, and filters (a repeated filter is any of)", async () => {
    const byTeam = reportJson(await report(store, { from: ["2026-11-21"], to: ["2026-11-23"], groupBy: ["team"] }));
    expect(byTeam.rows).toEqual([
      expect.objectContaining({ team: "billing", requests: 1, costNano: "3000000507" }),
      // r1 + r2 + r5: 2,140,000 + 1,000,001 + 9.
      expect.objectContaining({ team: "search", requests: 3, costNano: "3140010" }),
    ]);
    expect(Object.keys(byTeam.rows[0]!)).not.toContain("day");

    const gptOnly = reportJson(await report(store, { from: ["2026-11-21"], to: ["2026-11-23"], groupBy: [""], route: ["gpt"] }));
    expect(gptOnly.rows).toEqual([expect.objectContaining({ requests: 3, costNano: "3140010", costUsd: "0.00314001" })]);
    expect(gptOnly.totals.costNano).toBe("3140010");

    const either = reportJson(await report(store, { from: ["2026-11-22"], to: ["2026-11-22"], groupBy: ["model"], model: ["claude-sonnet-4-6", "gpt-4o"] }));
    expect(either.rows.map((row) => [row.model, row.costNano])).toEqual([
      ["claude-sonnet-4-6", "3000000507"],
      ["gpt-4o", "1000001"],
    ]);

    const nobody = reportJson(await report(store, { from: ["2026-11-21"], to: ["2026-11-23"], team: ["nobody"] }));
    expect(nobody.rows).toEqual([]);
    expect(nobody.totals).toMatchObject({ requests: 0, costNano: "0", costUsd: "0" });
    // A filter value no record carries is a true $0, but it may be a typo: the answer says so.
    expect(nobody.warnings).toEqual(['team "nobody" matches no record from 2026-11-21 to 2026-11-23 (names match whole and exactly)']);
    expect(gptOnly).not.toHaveProperty("warnings");
  });

  it("warns of each filter value that matches nothing, and how to give several names", async () => {
    const built = await report(store, { from: ["2026-11-21"], to: ["2026-11-23"], groupBy: ["team"], team: ["search,billing", "billing"], route: ["gtp"] });
    const body = reportJson(built);
    expect(body.rows.map((row) => row.team)).toEqual([]); // route "gtp" matches nothing
    expect(body.warnings).toEqual([
      'team "search,billing" matches no record from 2026-11-21 to 2026-11-23 (names match whole and exactly; for several, repeat the parameter: team=search&team=billing)',
      'route "gtp" matches no record from 2026-11-21 to 2026-11-23 (names match whole and exactly)',
    ]);
    // The same in the JSON written in pieces.
    expect(JSON.parse([...costReportJsonPieces(built, 1)].join(""))).toEqual(body);
  });

  it("writes the CSV a spreadsheet opens: dimensions, counts, exact USD, CRLF", async () => {
    const csv = reportCsv(await report(store, { from: ["2026-11-22"], to: ["2026-11-22"], groupBy: ["day,route"] }));
    expect(csv).toBe(
      [
        "day,route,requests,input_tokens,cache_read_tokens,cache_write_5m_tokens,cache_write_1h_tokens,output_tokens,reasoning_tokens,cost_usd,cache_savings_usd,errors,estimated,unpriced",
        "2026-11-22,claude,1,10,0,0,100,0,0,3.000000507,0,1,1,0",
        "2026-11-22,gpt,1,10,0,0,0,5,0,0.001000001,0,0,0,0",
        "",
      ].join("\r\n"),
    );
  });

  it("sums money past 2^53 nano-dollars exactly", async () => {
    const big = await open(`big-${name}`);
    const most = 2 ** 53 - 1; // $9,007,199.254740991, the largest exact JSON number in JavaScript
    await big.write([
      makeCostRecord({ requestId: "b1", time: "2026-11-21T10:00:00.000Z", cost: cost(most) }),
      makeCostRecord({ requestId: "b2", time: "2026-11-22T10:00:00.000Z", cost: cost(most) }),
      makeCostRecord({ requestId: "b3", time: "2026-11-23T10:00:00.000Z", cost: cost(3) }),
    ]);
    const body = reportJson(await report(big, { from: ["2026-11-21"], groupBy: [""] }));
    expect(body.totals.costNano).toBe("18014398509481985");
    expect(body.totals.costUsd).toBe("18014398.509481985");
  });

  it("sums one day's money past 2^53 nano-dollars exactly too", async () => {
    const day = await open(`big-day-${name}`);
    await day.write([
      makeCostRecord({ requestId: "d1", time: "2026-11-22T10:00:00.000Z", cost: cost(2 ** 53 - 1) }),
      makeCostRecord({ requestId: "d2", time: "2026-11-22T11:00:00.000Z", cost: cost(2) }),
    ]);
    const body = reportJson(await report(day, { from: ["2026-11-22"], to: ["2026-11-22"], groupBy: [""] }));
    expect(body.totals.costNano).toBe("9007199254740993");
  });
});

describe("a report written in pieces", () => {
  it("joins to the same JSON and CSV as the report rendered whole, with no rows too", async () => {
    const store = new MemoryLedgerStore();
    await store.write(Array.from({ length: 5 }, (_, index) => makeCostRecord({ requestId: `p${index}`, time: "2026-11-23T08:00:00.000Z", keyId: `key${index}` })));
    for (const groupBy of ["key", "team"]) {
      const built = await report(store, { groupBy: [groupBy] });
      const pieces = [...costReportJsonPieces(built, 2)];
      expect(pieces.length).toBe(2 + Math.ceil(built.rows.length / 2));
      expect(JSON.parse(pieces.join(""))).toEqual(reportJson(built));
      expect([...costCsvPieces(built, 2)].join("")).toBe(reportCsv(built));
    }
    const none = await report(store, { team: ["nobody"] });
    expect(JSON.parse([...costReportJsonPieces(none, 2)].join(""))).toEqual({ ...reportJson(none), rows: [] });
    expect([...costCsvPieces(none, 2)].join("").split("\r\n")).toHaveLength(2);
  });
});

describe("a model name that reads as a spreadsheet formula", () => {
  it("stays text in the CSV", async () => {
    const store = new MemoryLedgerStore();
    await store.write([makeCostRecord({ time: "2026-11-23T08:00:00.000Z", model: '=HYPERLINK("http://evil","x")' })]);
    const csv = reportCsv(await report(store, { groupBy: ["model"] }));
    expect(csv.split("\r\n")[1]).toMatch(/^"'=HYPERLINK\(""http:\/\/evil"",""x""\)",1,/);
  });

  it("quotes a name holding a bare LF, CR or tab (RFC 4180), so a spreadsheet reads one row per group", async () => {
    // Team names and key ids are free text in the config. Was: only a whole CRLF was quoted, and
    // a reader that ends a record at any line break outside quotes split the row in two.
    const store = new MemoryLedgerStore();
    await store.write([
      makeCostRecord({ requestId: "lf", time: "2026-11-23T08:00:00.000Z", team: "EMEA\nResearch", keyId: "eu" }),
      makeCostRecord({ requestId: "cr", time: "2026-11-23T08:00:00.000Z", team: "ops", keyId: "ops\rbot" }),
      makeCostRecord({ requestId: "tab", time: "2026-11-23T08:00:00.000Z", team: "a\tb", keyId: "k" }),
    ]);
    const csv = reportCsv(await report(store, { groupBy: ["team,key"] }));
    const rows = parse(csv, { columns: true, record_delimiter: ["\r\n", "\n", "\r"] }) as Record<string, string>[];
    expect(rows.map((row) => [row.team, row.key, row.requests, row.cost_usd])).toEqual([
      ["EMEA\nResearch", "eu", "1", "0.00214"],
      ["a\tb", "k", "1", "0.00214"],
      ["ops", "ops\rbot", "1", "0.00214"],
    ]);
  });

  it("while a negative amount stays a number a spreadsheet sums (used to be written as text: '-0.00125)", async () => {
    // A configured cached-input price above the input price (a cache-write price entered by
    // mistake) makes the saving negative: 1000 cached tokens × (2,500 − 3,750) nano = −1,250,000.
    const store = new MemoryLedgerStore();
    await store.write([makeCostRecord({ time: "2026-11-23T08:00:00.000Z", model: "-gpt", cost: cost(1, -1_250_000) })]);
    const [header, row] = reportCsv(await report(store, { groupBy: ["model"] })).split("\r\n");
    const cells = Object.fromEntries(header!.split(",").map((name, index) => [name, row!.split(",")[index]]));
    expect(cells).toMatchObject({ model: "'-gpt", cache_savings_usd: "-0.00125" });
  });
});

describe("records the stores must not count as they are", () => {
  it("counts a record twice in one batch once, in the file as after a restart", async () => {
    const path = join(dir, "twice.jsonl");
    const store = await FileLedgerStore.open(path);
    await store.write([records[0]!, records[0]!]);
    const live = reportJson(await report(store, { from: ["2026-11-21"], groupBy: [""] }));
    const reopened = reportJson(await report(await FileLedgerStore.open(path), { from: ["2026-11-21"], groupBy: [""] }));
    expect([live.totals.requests, live.totals.costNano]).toEqual([1, "2140000"]);
    expect([reopened.totals.requests, reopened.totals.costNano]).toEqual([1, "2140000"]);
  });

  it.each(stores)("puts the admin key's records written before \"(admin)\" under it, not in a tenant team called admin ($name)", async ({ name, open }) => {
    const store = await open(`legacy-admin-${name}`);
    await store.write([
      makeCostRecord({ requestId: "legacy-admin", time: "2026-11-02T10:00:00.000Z", keyId: "admin", team: "admin", admin: true, cost: cost(1_000) }),
      makeCostRecord({ requestId: "tenant", time: "2026-11-02T11:00:00.000Z", keyId: "ops-app", team: "admin", cost: cost(2_000) }),
    ]);
    const body = reportJson(await report(store, { from: ["2026-11-02"], to: ["2026-11-02"], groupBy: ["team,key"] }));
    expect(body.rows.map((row) => [row.team, row.key, row.costNano])).toEqual([
      ["(admin)", "(admin)", "1000"],
      ["admin", "ops-app", "2000"],
    ]);
  });

  it("reports from the memory store only the records it still holds (it is bounded)", async () => {
    const store = new MemoryLedgerStore(2);
    await store.write(records.slice(0, 3));
    const body = reportJson(await report(store, { from: ["2026-11-21"], groupBy: [""] }));
    // r1 was dropped for r2 and r3.
    expect(body.totals).toMatchObject({ requests: 2, costNano: "3001000008" });
  });
});

describe("a long report", () => {
  it("reads at most four days at once and lets other work run between them", async () => {
    let reading = 0;
    let mostAtOnce = 0;
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const query = parseCostReportQuery({ from: ["2025-11-23"], to: ["2026-11-23"], groupBy: ["team"] }, "2026-11-23");
    const built = await buildCostReport(query, async (day) => {
      reading += 1;
      mostAtOnce = Math.max(mostAtOnce, reading);
      await Promise.resolve();
      reading -= 1;
      return [{ dimensions: { route: "gpt", keyId: "app", team: "search", provider: "openai", model: "gpt-4o" }, metric: "cost_nano", value: day === "2026-11-23" ? 2 : 1 }];
    });
    ticking = false;
    expect(built.totals.costNano).toBe(367n);
    expect(mostAtOnce).toBe(4);
    // 366 days in groups of four: the report let the event loop turn after each of the first 91.
    expect(turns).toBeGreaterThanOrEqual(91);
  });
});

describe("the embedded file after a restart", () => {
  it("reports what the file holds, read once at open", async () => {
    const path = join(dir, "restart.jsonl");
    const first = await FileLedgerStore.open(path);
    await first.write(records);
    const reopened = await FileLedgerStore.open(path);
    const body = reportJson(await report(reopened, { from: ["2026-11-21"], to: ["2026-11-23"], groupBy: [""] }));
    expect(body.totals).toMatchObject({ requests: 4, costNano: "3003140517" });
  });
});
