import { describe, expect, it } from "vitest";
import { resolveConfig } from "./resolve-config.ts";

// Anthropic retires Claude Sonnet 4.5 on 2026-11-30, and retired Sonnet 4 and Opus 4 on
// 2026-06-15; from that day their requests fail. The gateway says so at start-up, per route.

const providers = {
  anthropic: { type: "anthropic", apiKey: { env: "ANTHROPIC_API_KEY" } },
  openai: { type: "openai", apiKey: { env: "OPENAI_API_KEY" } },
  local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:8080/v1" },
};
const env = { ANTHROPIC_API_KEY: "sk-ant", OPENAI_API_KEY: "sk" };
const keys = [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }];
const warningsOn = (iso: string, routes: object) => resolveConfig({ providers, routes, keys }, env, { now: Date.parse(iso) }).warnings;
const page = "(https://platform.claude.com/docs/en/about-claude/model-deprecations)";

describe("start-up warnings for retiring models", () => {
  it("count the days left before a target's retirement, dated snapshots included", () => {
    const routes = { claude: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5-20250929" }] } };
    expect(warningsOn("2026-11-24T10:00:00Z", routes)).toEqual([
      `routes.claude: claude-sonnet-4-5-20250929 on provider "anthropic" is retired on 2026-11-30 (in 6 days): from then on its requests fail; move the route to a current model before then ${page}`,
    ]);
    expect(warningsOn("2026-11-29T23:59:59Z", routes)[0]).toContain("(in 1 day)");
  });

  it("say a retired target fails, and whether the route has another to fall back to", () => {
    const routes = {
      alone: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }] },
      backed: { targets: [{ provider: "anthropic", model: "claude-opus-4" }, { provider: "openai", model: "gpt-4o" }] },
    };
    expect(warningsOn("2026-11-30T00:00:00Z", routes)).toEqual([
      `routes.alone: claude-sonnet-4-5 on provider "anthropic" was retired on 2026-11-30: its requests fail there, and the route has no other target; move the route to a current model ${page}`,
      `routes.backed: claude-opus-4 on provider "anthropic" was retired on 2026-06-15: its requests fail there, and the route falls back to another target on each request; move the route to a current model ${page}`,
    ]);
  });

  it("know Anthropic's -0 aliases of the retired models, and a retired last target has nothing after it", () => {
    const routes = {
      alias: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-0" }] },
      last: { targets: [{ provider: "openai", model: "gpt-4o" }, { provider: "anthropic", model: "claude-opus-4-0" }] },
      cheapest: { strategy: "cheapest", targets: [{ provider: "openai", model: "gpt-4o" }, { provider: "anthropic", model: "claude-opus-4" }] },
    };
    expect(warningsOn("2026-12-01T00:00:00Z", routes).map((warning) => warning.replace(/; move.*/, ""))).toEqual([
      'routes.alias: claude-sonnet-4-0 on provider "anthropic" was retired on 2026-06-15: its requests fail there, and the route has no other target',
      'routes.last: claude-opus-4-0 on provider "anthropic" was retired on 2026-06-15: its requests fail there, and it is the route\'s last target',
      'routes.cheapest: claude-opus-4 on provider "anthropic" was retired on 2026-06-15: its requests fail there, and the route falls back to another target on each request',
    ]);
  });

  it("leave current models alone, and a local decoder that serves a model of the same name", () => {
    const routes = {
      current: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
      local: { targets: [{ provider: "local", model: "claude-sonnet-4" }] },
    };
    expect(warningsOn("2026-12-01T00:00:00Z", routes)).toEqual([]);
  });
});
