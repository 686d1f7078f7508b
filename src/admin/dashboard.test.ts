import { Script } from "node:vm";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { GatewayEnv } from "../gateway/gateway-context.ts";
import { DASHBOARD_HTML } from "./dashboard-html.ts";
import { DASHBOARD_SCRIPT } from "./dashboard-script.ts";
import { DASHBOARD_PATHS, mountDashboard } from "./dashboard.ts";

// What the browser test (test/admin-dashboard.e2e.test.ts) cannot see quickly: every asset's
// headers, and the rules the page's safety rests on, checked on the source itself.

function dashboardApp() {
  const app = new Hono<GatewayEnv>();
  app.use(async (c, next) => {
    c.set("requestId", "req_test");
    await next();
  });
  mountDashboard(app);
  return app;
}

describe("admin dashboard assets", () => {
  it.each([
    ["/admin", "text/html; charset=utf-8"],
    ["/admin/dashboard.js", "text/javascript; charset=utf-8"],
    ["/admin/dashboard.css", "text/css; charset=utf-8"],
  ])("%s is served with strict headers and no key", async (path, contentType) => {
    const response = await dashboardApp().request(path);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(contentType);
    expect(response.headers.get("x-tollgate-request-id")).toBe("req_test");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const policy = response.headers.get("content-security-policy") ?? "";
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "form-action 'none'", "base-uri 'none'"]) {
      expect(policy).toContain(directive);
    }
    expect(policy).not.toContain("unsafe");
    expect((await response.text()).length).toBeGreaterThan(100);
  });

  it("lists every path it serves", () => {
    expect(DASHBOARD_PATHS).toEqual(["/admin", "/admin/dashboard.js", "/admin/dashboard.css"]);
  });

  it("has no inline script or style in the page (its CSP would block them)", () => {
    const scripts = DASHBOARD_HTML.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts).toEqual(['<script src="/admin/dashboard.js" defer>']);
    expect(DASHBOARD_HTML).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|javascript:/i);
  });

  it("is a script that parses, and writes no markup from strings", () => {
    expect(() => new Script(DASHBOARD_SCRIPT)).not.toThrow();
    expect(DASHBOARD_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
    // The key is kept for the tab only.
    expect(DASHBOARD_SCRIPT).not.toContain("localStorage");
  });
});
