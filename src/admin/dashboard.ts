import type { Hono } from "hono";
import type { GatewayEnv } from "../gateway/gateway-context.ts";
import { DASHBOARD_HTML } from "./dashboard-html.ts";
import { DASHBOARD_SCRIPT } from "./dashboard-script.ts";
import { DASHBOARD_STYLE } from "./dashboard-style.ts";

// The admin dashboard: one page and its two assets, served to anyone. They hold no data; the page
// asks for the admin key and reads `GET /v1/admin/costs` with it, so the key check stays in one
// place (the /v1 authenticator). Assets are string constants: no file system on Workers.

/**
 * Only the page's own script, style and API; no inline code, no framing, no form posts. Trusted
 * Types make any markup-from-a-string (innerHTML and the like) throw, so names in a report can
 * only ever reach the page as text.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

const PAGE_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

const DASHBOARD_ASSETS = [
  { path: "/admin", contentType: "text/html; charset=utf-8", body: DASHBOARD_HTML },
  { path: "/admin/dashboard.js", contentType: "text/javascript; charset=utf-8", body: DASHBOARD_SCRIPT },
  { path: "/admin/dashboard.css", contentType: "text/css; charset=utf-8", body: DASHBOARD_STYLE },
];

/** The paths the dashboard serves, all with GET (the gateway answers other methods with a 405). */
export const DASHBOARD_PATHS = DASHBOARD_ASSETS.map((asset) => asset.path);

/** Serves the dashboard under /admin on `app` (outside /v1, so it loads without a key). */
export function mountDashboard(app: Hono<GatewayEnv>): void {
  for (const { path, contentType, body } of DASHBOARD_ASSETS) {
    app.get(path, function dashboardAsset(c) {
      return new Response(body, {
        status: 200,
        headers: { "content-type": contentType, "x-tollgate-request-id": c.get("requestId"), ...PAGE_HEADERS },
      });
    });
  }
}
