// The dashboard's page: markup only. Its script and style come from /admin/dashboard.js and
// /admin/dashboard.css, since the page's Content-Security-Policy allows no inline script or style.
// It holds no data: every figure is fetched with the admin key the reader types in.

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tollgate · costs</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/admin/dashboard.css">
<script src="/admin/dashboard.js" defer></script>
</head>
<body>
<header><h1>tollgate costs</h1></header>
<main>
<form id="report-form" autocomplete="off">
  <fieldset class="key">
    <legend>Admin key</legend>
    <input id="admin-key" type="password" autocomplete="off" spellcheck="false" placeholder="paste the admin key" aria-label="Admin key">
    <button type="button" id="forget-key">Forget key</button>
    <small>Kept in this tab only (sessionStorage).</small>
  </fieldset>
  <fieldset class="range">
    <legend>Days (UTC, inclusive)</legend>
    <label>From <input id="from" type="date"></label>
    <label>To <input id="to" type="date"></label>
  </fieldset>
  <fieldset class="group-by">
    <legend>Group by</legend>
    <label><input type="checkbox" name="groupBy" value="day" checked> day</label>
    <label><input type="checkbox" name="groupBy" value="team" checked> team</label>
    <label><input type="checkbox" name="groupBy" value="key" checked> key</label>
    <label><input type="checkbox" name="groupBy" value="route" checked> route</label>
    <label><input type="checkbox" name="groupBy" value="provider" checked> provider</label>
    <label><input type="checkbox" name="groupBy" value="model" checked> model</label>
  </fieldset>
  <fieldset class="filters">
    <legend>Only (exact names; several go one per line; optional)</legend>
    <label>team <textarea id="filter-team" rows="2" spellcheck="false"></textarea></label>
    <label>key <textarea id="filter-key" rows="2" spellcheck="false"></textarea></label>
    <label>route <textarea id="filter-route" rows="2" spellcheck="false"></textarea></label>
    <label>provider <textarea id="filter-provider" rows="2" spellcheck="false"></textarea></label>
    <label>model <textarea id="filter-model" rows="2" spellcheck="false"></textarea></label>
  </fieldset>
  <div class="actions">
    <button type="submit" id="load-report">Load report</button>
    <button type="button" id="download-csv">Download CSV</button>
  </div>
</form>
<p id="status" role="status" aria-live="polite"></p>
<p id="error" role="alert" hidden></p>
<section id="totals" aria-label="Totals" hidden>
  <dl>
    <div><dt>Cost (USD)</dt><dd id="total-cost"></dd></div>
    <div><dt>Requests</dt><dd id="total-requests"></dd></div>
    <div><dt>Errors</dt><dd id="total-errors"></dd></div>
    <div><dt>Input tokens (uncached)</dt><dd id="total-input-tokens"></dd></div>
    <div><dt>Cached input tokens (reads)</dt><dd id="total-cache-read-tokens"></dd></div>
    <div><dt>Cache write tokens</dt><dd id="total-cache-write-tokens"></dd></div>
    <div><dt>Output tokens</dt><dd id="total-output-tokens"></dd></div>
    <div><dt>Cache savings (USD)</dt><dd id="total-cache-savings"></dd></div>
  </dl>
  <ul id="cost-flags" hidden></ul>
</section>
<div class="table-scroll">
<table id="rows" hidden>
  <thead><tr></tr></thead>
  <tbody></tbody>
</table>
</div>
</main>
</body>
</html>
`;
