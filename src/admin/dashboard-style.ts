// The dashboard's stylesheet, served as /admin/dashboard.css (no inline styles under its CSP).

export const DASHBOARD_STYLE = `:root {
  color-scheme: light dark;
  font-family: system-ui, sans-serif;
  font-size: 15px;
  --muted: #6b7280;
  --line: #d1d5db;
  --accent: #2563eb;
  --bad: #b91c1c;
}
body { margin: 0 auto; max-width: 1440px; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.4rem; margin: 0.5rem 0 1rem; }
form { display: flex; flex-wrap: wrap; gap: 0.75rem 1.5rem; align-items: flex-end; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: 0.4rem 0.75rem 0.6rem; margin: 0; }
legend { color: var(--muted); font-size: 0.85rem; padding: 0 0.25rem; }
fieldset label { margin-right: 0.6rem; white-space: nowrap; }
.key input { width: 22rem; max-width: 60vw; }
.key small { color: var(--muted); margin-left: 0.5rem; }
.filters label { display: inline-flex; gap: 0.3rem; align-items: flex-start; }
.filters textarea { width: 9rem; resize: vertical; }
input, textarea, button { font: inherit; }
button { padding: 0.3rem 0.9rem; border-radius: 5px; border: 1px solid var(--line); background: transparent; cursor: pointer; }
button[type="submit"] { background: var(--accent); border-color: var(--accent); color: #fff; }
button:disabled { opacity: 0.5; cursor: progress; }
#status { color: var(--muted); min-height: 1.2em; }
#error { color: var(--bad); font-weight: 600; }
#totals dl { display: flex; flex-wrap: wrap; gap: 0.75rem; margin: 0.5rem 0; }
#totals dl div { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.9rem; min-width: 9rem; }
#totals dt { color: var(--muted); font-size: 0.8rem; }
#totals dd { margin: 0.2rem 0 0; font-size: 1.3rem; font-variant-numeric: tabular-nums; }
#cost-flags { color: var(--bad); }
table { border-collapse: collapse; width: 100%; margin-top: 1rem; font-variant-numeric: tabular-nums; }
.table-scroll { overflow-x: auto; }
th, td { border-bottom: 1px solid var(--line); padding: 0.3rem 0.5rem; text-align: left; }
td { white-space: nowrap; }
th.number, td.number { text-align: right; }
th button { border: 0; padding: 0; font-weight: 600; }
th[aria-sort="ascending"] button::after { content: " ▲"; }
th[aria-sort="descending"] button::after { content: " ▼"; }
td.none { color: var(--muted); font-style: italic; }
`;
