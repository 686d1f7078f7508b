import { readFile } from "node:fs/promises";
import { parse } from "csv-parse/sync";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CostRecord } from "../src/metering/cost-record.ts";
import { formatUsd } from "../src/pricing/format-usd.ts";
import { findChromium, launchChromium, watchPageProblems, type RunningChromium } from "./support/chromium.ts";
import { CLEAR_OF_MIDNIGHT_TIMEOUT_MS, clearOfMidnight } from "./support/clear-of-midnight.ts";
import { ADMIN_KEY, APP_KEY, ledgerRecords, sha256, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// The admin dashboard (/admin) in a real browser: Debian's Chromium, driven by playwright-core,
// against a running gateway whose ledger holds the records of requests the official SDKs made.
// Every figure the page shows is checked against those records, summed here in integers: the
// page must show the API's exact decimal strings, under its strict Content-Security-Policy.

const browser = findChromium();

const DIMENSIONS = ["day", "team", "key", "route", "provider", "model"];
// Names reach the page from config and from providers' answers: this one must show as text.
const MARKUP_MODEL = '<img src=x onerror="document.title=1">gpt-4o';
const MESSAGES = [{ role: "user" as const, content: "How much?" }];
// Team names are free text in the config: a filter must take this one whole.
const COMMA_TEAM = "Sales, EMEA";
const COMMA_TEAM_KEY = "tg_test_sales_emea_key_0123456789";

describe.skipIf("skipped" in browser)("admin dashboard in Chromium", () => {
  const rig = useMockedGateway({ markup: { targets: [{ provider: "openai", model: MARKUP_MODEL }] } }, [{ id: "sales-emea", team: COMMA_TEAM, hash: sha256(COMMA_TEAM_KEY) }]);
  let chromium: RunningChromium;
  let page: Page;
  let problems: string[];
  let records: CostRecord[];
  let today: string;

  // The report's default range ends today (UTC): keep the whole file inside one day.
  beforeAll(() => clearOfMidnight(), CLEAR_OF_MIDNIGHT_TIMEOUT_MS);

  beforeAll(async () => {
    today = new Date().toISOString().slice(0, 10);
    const { openai, anthropic } = rig.gateway;
    const { openai: openaiMock, anthropic: anthropicMock } = rig.mocks;
    const ids: string[] = [];
    const idOf = (response: Response) => response.headers.get("x-tollgate-request-id")!;

    openaiMock.enqueue({ kind: "text", text: "Cached answer.", usage: { prompt_tokens: 1200, completion_tokens: 42, cached_tokens: 1024 } });
    ids.push(idOf((await openai.chat.completions.create({ model: "gpt", messages: MESSAGES }).withResponse()).response));

    openaiMock.enqueue({ kind: "text", text: "A streamed answer.", usage: { prompt_tokens: 333, completion_tokens: 17 } });
    const openaiStream = await openai.chat.completions.create({ model: "gpt", messages: MESSAGES, stream: true }).withResponse();
    await drain(openaiStream.data);
    ids.push(idOf(openaiStream.response));

    anthropicMock.enqueue({ kind: "text", text: "Cached.", usage: { input_tokens: 101, output_tokens: 23, cache_read_input_tokens: 2048, cache_creation_input_tokens: 512 } });
    ids.push(idOf((await anthropic.messages.create({ model: "claude", max_tokens: 64, messages: MESSAGES }).withResponse()).response));

    anthropicMock.enqueue({ kind: "text", text: "Streamed from Claude.", usage: { input_tokens: 77, output_tokens: 9 } });
    const anthropicStream = await anthropic.messages.create({ model: "claude", max_tokens: 64, messages: MESSAGES, stream: true }).withResponse();
    await drain(anthropicStream.data);
    ids.push(idOf(anthropicStream.response));

    // The Anthropic SDK on a route that OpenAI answers first.
    openaiMock.enqueue({ kind: "text", text: "Via the fallback route.", usage: { prompt_tokens: 51, completion_tokens: 7 } });
    const crossStream = await anthropic.messages.create({ model: "gpt-then-claude", max_tokens: 64, messages: MESSAGES, stream: true }).withResponse();
    await drain(crossStream.data);
    ids.push(idOf(crossStream.response));

    // A model with no price: a cost of 0, flagged unpriced.
    openaiMock.enqueue({ kind: "text", text: "Free?", usage: { prompt_tokens: 5, completion_tokens: 2 } });
    ids.push(idOf((await openai.chat.completions.create({ model: "markup", messages: MESSAGES }).withResponse()).response));

    // A team whose name holds a comma.
    openaiMock.enqueue({ kind: "text", text: "For Sales.", usage: { prompt_tokens: 52, completion_tokens: 9 } });
    ids.push(idOf((await openai.chat.completions.create({ model: "gpt", messages: MESSAGES }, { headers: { authorization: `Bearer ${COMMA_TEAM_KEY}` } }).withResponse()).response));

    for (const id of ids) await waitForRecord(rig.gateway, id);
    records = await ledgerRecords(rig.gateway);
  });

  beforeAll(async () => {
    if ("skipped" in browser) return;
    chromium = await launchChromium(browser.path);
  });
  afterAll(async () => {
    await chromium?.close();
  });

  beforeEach(async () => {
    page = await chromium.context.newPage();
    // Well inside the test's own timeout, so a stuck wait fails with what it waited for.
    page.setDefaultTimeout(10_000);
    // The cost API's own 401 and 403 are what the error tests ask for; anything else is a problem.
    problems = watchPageProblems(page, (url) => url.includes("/v1/admin/costs"));
  });
  afterEach(async () => {
    await page.close();
    expect(problems).toEqual([]);
  });

  const sumOf = (list: CostRecord[], field: (record: CostRecord) => number) => list.reduce((sum, record) => sum + field(record), 0);
  const costOf = (list: CostRecord[]) => sumOf(list, (record) => record.cost.totalNano);
  const routes = () => [...new Set(records.map((record) => record.route))].sort();
  const count = (value: number) => value.toLocaleString("en-US");

  /** Opens the page; its script has run once the default range is filled in. */
  async function openDashboard() {
    const response = await page.goto(`${rig.gateway.url}/admin`);
    expect(await page.inputValue("#to"), "the dashboard's script did not run").toBe(today);
    return response!;
  }

  /** Fills the form, loads the report, and waits for the answer to be shown. */
  async function loadReport(key: string, groupBy?: string[]) {
    await page.fill("#admin-key", key);
    if (groupBy) for (const dimension of DIMENSIONS) await page.setChecked(`input[name=groupBy][value=${dimension}]`, groupBy.includes(dimension));
    await page.click("#load-report");
    await page.locator("#load-report:enabled").waitFor();
  }

  const text = (selector: string) => page.locator(selector).textContent();
  const headings = () => page.locator("#rows thead th").allTextContents();
  const tableRows = () => page.locator("#rows tbody tr").evaluateAll((rows) => rows.map((row) => Array.from((row as HTMLTableRowElement).cells, (cell) => cell.textContent ?? "")));

  it("has records to report: seven requests on four routes, one unpriced", () => {
    expect(records).toHaveLength(7);
    expect(routes()).toEqual(["claude", "gpt", "gpt-then-claude", "markup"]);
    expect(records.filter((record) => record.unpriced)).toHaveLength(1);
    // The fixture's costs are ones whose float sum shows wrong digits: a page that added USD as
    // numbers could not pass the total checked below.
    const floatSum = records.reduce((sum, record) => sum + Number(formatUsd(record.cost.totalNano)), 0);
    expect(String(floatSum)).not.toBe(formatUsd(costOf(records)));
  });

  it("serves the page with strict headers, and its script and style work under them", async () => {
    const response = await openDashboard();
    expect(response.status()).toBe(200);
    const headers = response.headers();
    expect(headers["content-security-policy"]).toContain("default-src 'none'");
    expect(headers["content-security-policy"]).toContain("script-src 'self'");
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    expect(headers["cache-control"]).toBe("no-store");
    expect(headers["x-tollgate-request-id"]).toMatch(/\S/);

    // The script ran: it filled in the default range, month to date (UTC).
    expect(await page.inputValue("#from")).toBe(`${today.slice(0, 8)}01`);
    // The stylesheet applied (a table's default is "separate").
    expect(await page.locator("#rows").evaluate((table) => getComputedStyle(table).borderCollapse)).toBe("collapse");

    // The policy is enforced, and a violation is seen by the watcher this file relies on.
    const markup = await page.evaluate(() => {
      try {
        document.body.insertAdjacentHTML("beforeend", "<b>injected</b>");
        return "markup written";
      } catch (error) {
        return (error as Error).name;
      }
    });
    expect(markup).toBe("TypeError");
    expect(problems.join("\n")).toMatch(/TrustedHTML|Trusted Type/i);
    problems.length = 0;
  });

  it("serves the page only with GET (and HEAD)", async () => {
    const head = await fetch(`${rig.gateway.url}/admin`, { method: "HEAD" });
    expect(head.status).toBe(200);
    const post = await fetch(`${rig.gateway.url}/admin`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it.each([
    ["a wrong key", "tg_not_a_key_0123456789", 401],
    ["an app key (not the admin key)", APP_KEY, 403],
  ])("shows the API's error for %s, and no figures", async (_name, key, status) => {
    const answer = await fetch(`${rig.gateway.url}/v1/admin/costs`, { headers: { authorization: `Bearer ${key}` } });
    expect(answer.status).toBe(status);
    const { error } = (await answer.json()) as { error: { message: string } };

    await openDashboard();
    await loadReport(key);
    expect(await page.locator("#error").isVisible()).toBe(true);
    expect(await text("#error")).toBe(`Error ${status}: ${error.message}`);
    expect(await page.locator("#rows tbody tr").count()).toBe(0);
    expect(await page.locator("#totals").isHidden()).toBe(true);
    // A key that is not the admin key is not kept for the next load.
    expect(await page.evaluate(() => sessionStorage.getItem("tollgate.adminKey"))).toBeNull();
  });

  it("shows the admin key's report: exact totals and one row per route", async () => {
    await openDashboard();
    await loadReport(ADMIN_KEY, ["route"]);
    expect(await page.locator("#error").isHidden()).toBe(true);
    expect(await text("#status")).toBe(`4 rows, ${today.slice(0, 8)}01 to ${today} (UTC)`);

    expect(await text("#total-cost")).toBe(`$${formatUsd(costOf(records))}`);
    expect(await text("#total-requests")).toBe(String(records.length));
    expect(await text("#total-errors")).toBe("0");
    expect(await text("#total-input-tokens")).toBe(count(sumOf(records, (record) => record.usage.inputTokens)));
    expect(await text("#total-cache-read-tokens")).toBe(count(sumOf(records, (record) => record.usage.cacheReadTokens)));
    expect(await text("#total-cache-write-tokens")).toBe(count(sumOf(records, (record) => record.usage.cacheWrite5mTokens + record.usage.cacheWrite1hTokens)));
    expect(await text("#total-output-tokens")).toBe(count(sumOf(records, (record) => record.usage.outputTokens)));
    expect(await text("#total-cache-savings")).toBe(`$${formatUsd(sumOf(records, (record) => record.cost.cacheSavingsNano))}`);
    expect(await text("#cost-flags")).toContain("1 cost record used a model with no price");

    expect(await headings()).toEqual(["route", "Requests", "Errors", "Input tokens", "Cached input", "Cache writes", "Output tokens", "Cost (USD)", "Cache savings (USD)"]);
    const expectedRows = routes().map((route) => {
      const ofRoute = records.filter((record) => record.route === route);
      // A route with records of a model that has no price says so beside its cost.
      const unpriced = ofRoute.filter((record) => record.unpriced).length;
      return [route, String(ofRoute.length), formatUsd(costOf(ofRoute)) + (unpriced > 0 ? ` (${unpriced} unpriced)` : "")];
    });
    const shownRows = await tableRows();
    expect(shownRows.map((cells) => [cells[0], cells[1], cells[7]])).toEqual(expectedRows);

    // Sorted by cost, most expensive first; a second click, cheapest first.
    await page.getByRole("button", { name: "Cost (USD)" }).click();
    const byCost = [...expectedRows].sort((a, b) => costOf(records.filter((r) => r.route === b[0])) - costOf(records.filter((r) => r.route === a[0])));
    expect((await tableRows()).map((cells) => cells[0])).toEqual(byCost.map((row) => row[0]));
    await page.getByRole("button", { name: "Cost (USD)" }).click();
    expect((await tableRows()).map((cells) => cells[0])).toEqual(byCost.map((row) => row[0]).reverse());

    // The key stays with this tab only.
    expect(await page.evaluate(() => [sessionStorage.getItem("tollgate.adminKey"), localStorage.length])).toEqual([ADMIN_KEY, 0]);
  });

  it("shows names as text, never as markup", async () => {
    await openDashboard();
    const title = await page.title();
    await loadReport(ADMIN_KEY, ["model"]);
    expect((await tableRows()).map((cells) => cells[0])).toContain(MARKUP_MODEL);
    expect(await page.locator("#rows img").count()).toBe(0);
    expect(await page.title()).toBe(title);
  });

  it("loads the report again after a reload, grouped by all six by default", async () => {
    await openDashboard();
    await loadReport(ADMIN_KEY);
    await page.reload();
    await page.locator("#totals:not([hidden])").waitFor();
    await page.locator("#load-report:enabled").waitFor();
    expect(await text("#total-cost")).toBe(`$${formatUsd(costOf(records))}`);
    expect(await headings()).toEqual([...DIMENSIONS, "Requests", "Errors", "Input tokens", "Cached input", "Cache writes", "Output tokens", "Cost (USD)", "Cache savings (USD)"]);
    const groups = new Set(records.map((record) => [record.team, record.keyId, record.route, record.provider, record.model].join("\n")));
    expect(await tableRows()).toHaveLength(groups.size);
    expect((await tableRows()).every((cells) => cells[0] === today)).toBe(true);
  });

  it("takes several names in a filter box, one per line, and says which matched nothing", async () => {
    await openDashboard();
    const team = records[0]!.team;
    await page.fill("#filter-team", `${team}\n nobody \n\n${COMMA_TEAM}`);
    await loadReport(ADMIN_KEY, ["team"]);
    expect((await tableRows()).map((cells) => cells[0])).toEqual([COMMA_TEAM, team]);
    expect(await text("#total-cost")).toBe(`$${formatUsd(costOf(records.filter((record) => [team, COMMA_TEAM].includes(record.team))))}`);
    expect(await text("#cost-flags")).toContain(`team "nobody" matches no record from ${today.slice(0, 8)}01 to ${today}`);
  });

  it("takes a name holding a comma whole (was: split into two names that matched nothing)", async () => {
    await openDashboard();
    await page.fill("#filter-team", COMMA_TEAM);
    await loadReport(ADMIN_KEY, ["team"]);
    expect((await tableRows()).map((cells) => cells[0])).toEqual([COMMA_TEAM]);
    expect(await text("#total-cost")).toBe(`$${formatUsd(costOf(records.filter((record) => record.team === COMMA_TEAM)))}`);
    expect(await page.locator("#cost-flags").isHidden()).toBe(true);
  });

  it("says how to write several names when a line holding a comma matched nothing", async () => {
    await openDashboard();
    const team = records[0]!.team;
    await page.fill("#filter-team", `${team}, nobody`);
    await loadReport(ADMIN_KEY, ["team"]);
    expect(await tableRows()).toEqual([]);
    expect(await text("#cost-flags")).toContain(`team "${team}, nobody" matches no record`);
    expect(await text("#cost-flags")).toContain("for several names, write one per line");
  });

  it("downloads the CSV the API writes, with the same figures and a byte order mark for Excel", async () => {
    await openDashboard();
    await loadReport(ADMIN_KEY, ["route", "model"]);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-csv")]);
    const from = `${today.slice(0, 8)}01`;
    expect(download.suggestedFilename()).toBe(`tollgate-costs-${from}-to-${today}.csv`);
    const csv = await readFile((await download.path())!, "utf8");
    expect(csv.startsWith("\uFEFFroute,model,")).toBe(true);
    const rows = parse(csv, { columns: true, bom: true }) as Record<string, string>[];

    const expected = [...new Set(records.map((record) => `${record.route}\n${record.model}`))].sort().map((group) => {
      const [route, model] = group.split("\n") as [string, string];
      const ofGroup = records.filter((record) => record.route === route && record.model === model);
      return { route, model, requests: String(ofGroup.length), cost_usd: formatUsd(costOf(ofGroup)) };
    });
    expect(rows.map(({ route, model, requests, cost_usd }) => ({ route, model, requests, cost_usd }))).toEqual(expected);
    expect(await text("#status")).toBe(`Downloaded tollgate-costs-${from}-to-${today}.csv`);
  });

  it("says after a download which filter name matched nothing (was: only \"Downloaded …\", and a file of no rows)", async () => {
    await openDashboard();
    await page.fill("#admin-key", ADMIN_KEY);
    await page.fill("#filter-team", "serach");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-csv")]);
    await page.locator("#download-csv:enabled").waitFor();
    expect(await text("#status")).toBe(`Downloaded ${download.suggestedFilename()}`);
    expect(await page.locator("#error").isVisible()).toBe(true);
    expect(await text("#error")).toBe(`team "serach" matches no record from ${today.slice(0, 8)}01 to ${today} (names match whole and exactly).`);
  });

  it("shows the API's error instead of downloading with a wrong key", async () => {
    await openDashboard();
    await page.fill("#admin-key", "tg_not_a_key_0123456789");
    let downloaded = false;
    page.on("download", () => (downloaded = true));
    await page.click("#download-csv");
    await page.locator("#error:not([hidden])").waitFor();
    expect(await text("#error")).toMatch(/^Error 401: /);
    expect(downloaded).toBe(false);
  });
});

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const part of stream) void part;
}
