// The dashboard's script, served as /admin/dashboard.js: plain browser JavaScript, no framework and
// no build step. Kept as a string so the gateway serves it on any runtime (no file system on
// Workers). It is written without template literals, so this module's own template stays plain.
//
// What it must keep true: the admin key lives in sessionStorage only (gone with the tab) and is
// sent only to /v1/admin/costs; names in the report (teams, keys, routes, models) come from config
// and from providers' answers, so they reach the page through textContent only; money is shown as
// the API's exact decimal strings, never recomputed with floating point.

export const DASHBOARD_SCRIPT = String.raw`"use strict";

const KEY_STORAGE = "tollgate.adminKey";
const COSTS_PATH = "/v1/admin/costs";
const FILTERS = ["team", "key", "route", "provider", "model"];

const form = document.getElementById("report-form");
const keyInput = document.getElementById("admin-key");
const fromInput = document.getElementById("from");
const toInput = document.getElementById("to");
const statusLine = document.getElementById("status");
const errorLine = document.getElementById("error");
const totalsSection = document.getElementById("totals");
const flagList = document.getElementById("cost-flags");
const table = document.getElementById("rows");
const loadButton = document.getElementById("load-report");
const csvButton = document.getElementById("download-csv");

// Token and request counts are plain JSON numbers: exact far past any real total.
const countFormat = new Intl.NumberFormat("en-US");
const count = (value) => countFormat.format(Number(value ?? 0));
const cacheWriteTokens = (row) => Number(row.cacheWrite5mTokens ?? 0) + Number(row.cacheWrite1hTokens ?? 0);

// The table's metric columns, after the dimension columns the report was grouped by.
const METRIC_COLUMNS = [
  { heading: "Requests", text: (row) => count(row.requests), sortValue: (row) => row.requests },
  { heading: "Errors", text: (row) => count(row.errors), sortValue: (row) => row.errors },
  { heading: "Input tokens", text: (row) => count(row.inputTokens), sortValue: (row) => row.inputTokens },
  { heading: "Cached input", text: (row) => count(row.cacheReadTokens), sortValue: (row) => row.cacheReadTokens },
  { heading: "Cache writes", text: (row) => count(cacheWriteTokens(row)), sortValue: cacheWriteTokens },
  { heading: "Output tokens", text: (row) => count(row.outputTokens), sortValue: (row) => row.outputTokens },
  // Nano-dollars come as decimal strings (a year's spend can pass 2^53): compared as BigInt.
  // A row with records of a model that has no price says so: its $0 is not free.
  { heading: "Cost (USD)", text: (row) => String(row.costUsd) + (row.unpriced > 0 ? " (" + count(row.unpriced) + " unpriced)" : ""), sortValue: (row) => BigInt(row.costNano) },
  { heading: "Cache savings (USD)", text: (row) => String(row.cacheSavingsUsd), sortValue: (row) => BigInt(row.cacheSavingsNano) },
].map((column) => ({ ...column, numeric: true }));

let shown = { columns: [], rows: [] };
let sort = { column: -1, descending: true };
// Each load takes a number; an answer that arrives after a newer load began is dropped.
let latestLoad = 0;

// ---- the report's query ----

function utcToday() {
  return new Date().toISOString().slice(0, 10);
}

function groupByChoice() {
  return Array.from(form.querySelectorAll("input[name=groupBy]:checked"), (box) => box.value);
}

function costsUrl(format) {
  const query = new URLSearchParams();
  if (fromInput.value) query.set("from", fromInput.value);
  if (toInput.value) query.set("to", toInput.value);
  // An empty groupBy asks for totals only, one row.
  query.set("groupBy", groupByChoice().join(","));
  // Several names in a box are any of them (the API's repeated parameter).
  for (const name of FILTERS) {
    for (const value of filterNames(name)) query.append(name, value);
  }
  if (format === "csv") query.set("format", "csv");
  return COSTS_PATH + "?" + query.toString();
}

/**
 * The names in a filter box, one per line. Not comma-separated: names come from config and may
 * hold a comma ("Sales, EMEA"), which a split on commas sent as two names matching nothing. A
 * column pasted from a spreadsheet comes one per line too.
 */
function filterNames(name) {
  return document.getElementById("filter-" + name).value.split("\n").map((line) => line.trim()).filter((line) => line !== "");
}

class ReportError extends Error {}

/** The API's answer, or a ReportError whose message is the API's own error.message. */
async function fetchCosts(format) {
  const key = keyInput.value.trim();
  if (key === "") throw new ReportError("Enter the admin key first.");
  sessionStorage.setItem(KEY_STORAGE, key);
  let response;
  try {
    response = await fetch(costsUrl(format), {
      headers: { authorization: "Bearer " + key },
      cache: "no-store",
      credentials: "omit",
    });
  } catch (error) {
    throw new ReportError("Could not reach tollgate: " + error.message);
  }
  if (response.ok) return response;
  // A key that is not the admin key (unknown: 401, an app's: 403) is not kept for the next load.
  if (response.status === 401 || response.status === 403) sessionStorage.removeItem(KEY_STORAGE);
  throw new ReportError("Error " + response.status + ": " + (await errorMessageOf(response)));
}

async function errorMessageOf(response) {
  const text = await response.text();
  try {
    const message = JSON.parse(text).error.message;
    if (typeof message === "string") return message;
  } catch {
    // Not the gateway's JSON error (a proxy's page, say): show the start of what came.
  }
  return text.slice(0, 200) || response.statusText;
}

// ---- loading and showing a report ----

async function loadReport() {
  const load = ++latestLoad;
  setBusy(true, "Loading…");
  try {
    const report = await (await fetchCosts("json")).json();
    if (load !== latestLoad) return;
    showReport(report);
    setBusy(false, count(report.rows.length) + (report.rows.length === 1 ? " row" : " rows") + ", " + report.from + " to " + report.to + " (UTC)");
  } catch (error) {
    if (load !== latestLoad) return;
    clearReport();
    showError(error);
    setBusy(false, "");
  }
}

function showReport(report) {
  errorLine.hidden = true;
  errorLine.textContent = "";
  showTotals(report.totals, report.warnings ?? []);
  shown = {
    columns: report.groupBy.map((dimension) => ({
      heading: dimension,
      text: (row) => (row[dimension] === "" ? "(none)" : String(row[dimension])),
      sortValue: (row) => String(row[dimension]),
      numeric: false,
      isNone: (row) => row[dimension] === "",
    })).concat(METRIC_COLUMNS),
    rows: report.rows,
  };
  sort = { column: -1, descending: true };
  renderTable();
}

function showTotals(totals, warnings) {
  setText("total-cost", "$" + totals.costUsd);
  setText("total-requests", count(totals.requests));
  setText("total-errors", count(totals.errors));
  setText("total-input-tokens", count(totals.inputTokens));
  setText("total-cache-read-tokens", count(totals.cacheReadTokens));
  setText("total-cache-write-tokens", count(cacheWriteTokens(totals)));
  setText("total-output-tokens", count(totals.outputTokens));
  setText("total-cache-savings", "$" + totals.cacheSavingsUsd);
  const flags = [];
  // These count cost records, which include the billed attempts before a fallback: not requests.
  if (totals.estimated > 0) flags.push(records(totals.estimated) + " priced from tollgate's own token counts (the provider reported none): estimated.");
  if (totals.unpriced > 0) flags.push(records(totals.unpriced) + " used a model with no price: counted at $0 here.");
  // A filter that matched nothing (a typo, or two names on one line) reads as a true $0 otherwise.
  for (const warning of warnings) flags.push(warning + ".");
  // The API's own advice for "a, b" is its repeated parameter: here, it is one name per line.
  if (warnings.length > 0 && FILTERS.some((name) => filterNames(name).some((value) => value.includes(",")))) {
    flags.push("A name with a comma is taken whole: for several names, write one per line.");
  }
  flagList.replaceChildren(...flags.map((flag) => element("li", flag)));
  flagList.hidden = flags.length === 0;
  totalsSection.hidden = false;
}

function renderTable() {
  const { columns, rows } = shown;
  const ordered = sort.column < 0 ? rows : sortedRows(rows, columns[sort.column], sort.descending);
  const headings = columns.map((column, index) => {
    const button = element("button", column.heading);
    button.type = "button";
    button.addEventListener("click", () => sortBy(index));
    const cell = element("th", button);
    cell.scope = "col";
    if (column.numeric) cell.className = "number";
    if (index === sort.column) cell.setAttribute("aria-sort", sort.descending ? "descending" : "ascending");
    return cell;
  });
  table.tHead.rows[0].replaceChildren(...headings);
  table.tBodies[0].replaceChildren(
    ...ordered.map((row) =>
      element(
        "tr",
        ...columns.map((column) => {
          const cell = element("td", column.text(row));
          if (column.numeric) cell.className = "number";
          else if (column.isNone(row)) cell.className = "none";
          return cell;
        }),
      ),
    ),
  );
  table.hidden = false;
}

/** A click on a column sorts by it (figures largest first, names A to Z); a second click flips it. */
function sortBy(index) {
  sort = index === sort.column ? { column: index, descending: !sort.descending } : { column: index, descending: shown.columns[index].numeric };
  renderTable();
}

function sortedRows(rows, column, descending) {
  const direction = descending ? -1 : 1;
  return rows.slice().sort((a, b) => {
    const x = column.sortValue(a);
    const y = column.sortValue(b);
    const order = column.numeric ? (x < y ? -1 : x > y ? 1 : 0) : String(x).localeCompare(String(y));
    return direction * order;
  });
}

function clearReport() {
  shown = { columns: [], rows: [] };
  totalsSection.hidden = true;
  table.hidden = true;
  table.tHead.rows[0].replaceChildren();
  table.tBodies[0].replaceChildren();
}

// ---- CSV ----

async function downloadCsv() {
  setBusy(true, "Preparing CSV…");
  try {
    const response = await fetchCosts("csv");
    const name = fileNameOf(response.headers.get("content-disposition")) ?? "tollgate-costs.csv";
    // A byte order mark first: Excel, which is where this file is opened, reads a CSV without
    // one in the machine's legacy code page and garbles every non-ASCII name ("Zürich"). The
    // API's CSV has none, for the programs that read it.
    const url = URL.createObjectURL(new Blob(["\uFEFF", await response.text()], { type: "text/csv;charset=utf-8" }));
    const link = element("a");
    link.href = url;
    link.download = name;
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    // The download has started from the URL by now; keep it a while for slow disks.
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    showDownloadWarnings(warningsOf(response));
    setBusy(false, "Downloaded " + name);
  } catch (error) {
    showError(error);
    setBusy(false, "");
  }
}

/** The CSV's warnings (a filter name that matched nothing), which the file has no room for. */
function warningsOf(response) {
  try {
    const warnings = JSON.parse(response.headers.get("x-tollgate-warnings") ?? "[]");
    return Array.isArray(warnings) ? warnings.map(String) : [];
  } catch {
    return [];
  }
}

// In red, as an error is: a file of no rows with no word said was filed as a true $0.
function showDownloadWarnings(warnings) {
  errorLine.textContent = warnings.map((warning) => warning + ".").join(" ");
  errorLine.hidden = warnings.length === 0;
}

function fileNameOf(disposition) {
  const name = /filename="([^"]+)"/.exec(disposition ?? "")?.[1];
  return name && /^[\w.-]+$/.test(name) ? name : undefined;
}

// ---- small helpers ----

function element(tag, ...children) {
  const node = document.createElement(tag);
  node.append(...children); // strings become text nodes, never markup
  return node;
}

function records(number) {
  return count(number) + (number === 1 ? " cost record" : " cost records");
}

function setText(id, text) {
  document.getElementById(id).textContent = text;
}

function setBusy(busy, status) {
  loadButton.disabled = busy;
  csvButton.disabled = busy;
  statusLine.textContent = status;
}

function showError(error) {
  errorLine.textContent = error instanceof ReportError ? error.message : "Unexpected: " + String(error);
  errorLine.hidden = false;
}

// ---- start ----

// The report's default range is the month to date, as the API's.
toInput.value = utcToday();
fromInput.value = utcToday().slice(0, 8) + "01";

form.addEventListener("submit", (event) => {
  event.preventDefault();
  loadReport();
});
csvButton.addEventListener("click", downloadCsv);
document.getElementById("forget-key").addEventListener("click", () => {
  sessionStorage.removeItem(KEY_STORAGE);
  keyInput.value = "";
  clearReport();
  statusLine.textContent = "Key forgotten.";
});

const storedKey = sessionStorage.getItem(KEY_STORAGE);
if (storedKey) {
  keyInput.value = storedKey;
  loadReport();
}
`;
