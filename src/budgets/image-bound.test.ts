import { describe, expect, it } from "vitest";
import { Admission } from "./admission.ts";
import { windowKey, windowOf } from "./budget-window.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { resolveConfig } from "../config/resolve-config.ts";
import { PriceBook } from "../metering/price-book.ts";
import type { ChatRequest } from "../model/chat-request.ts";

// Admission bounds each image at 6,000 input tokens, above what gpt-4o (1,445 at most) or Claude
// bills for one. gpt-4o-mini bills images at gpt-4o's dollar price, which at its input price is
// 2,833 + 5,667 per tile: 48,169 tokens for a 2048 × 768 image. Bounded at 6,000, a budget held
// an eighth of what such a request costs, and concurrent image requests overspent it.

const config = resolveConfig(
  {
    providers: { openai: { type: "openai", apiKey: { env: "K" } } },
    routes: {
      mini: { targets: [{ provider: "openai", model: "gpt-4o-mini" }], budget: { usd: 10, window: "total" } },
      big: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 10, window: "total" } },
    },
    keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
  },
  { K: "sk" },
);
const caller = { kind: "key" as const, key: config.keys[0]! };
const now = Date.parse("2026-11-22T12:00:00Z");

/** "What is this?" (13 bytes) and one image; framing adds 8 per message and 8: 29 tokens of text. */
const withImage = (route: string): ChatRequest => ({
  route,
  stream: false,
  streamUsage: false,
  maxTokens: 10,
  messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", source: "url", url: "https://example.com/a.png" }] }],
});

async function reserved(route: "mini" | "big"): Promise<number> {
  const store = new MemoryAdmissionStore();
  const admission = new Admission({ config, store, prices: new PriceBook(config.providers), now: () => now });
  await admission.admit({ requestId: `req_${route}`, caller, routeName: route, route: config.routes[route]!, request: withImage(route) });
  const [level] = await store.levels([windowKey(`route:${route}`, windowOf(config.routes[route]!.budget!, now))], now);
  return level!.reservedNano;
}

describe("the worst case of an image", () => {
  it("on gpt-4o-mini holds the 48,169 tokens its largest image bills", async () => {
    // (29 + 48,169) × $0.15 / 1M = 7,229,700 nano; 10 × $0.60 / 1M = 6,000 nano.
    expect(await reserved("mini")).toBe(7_235_700);
  });

  it("on gpt-4o keeps the general 6,000-token bound", async () => {
    // (29 + 6,000) × $2.50 / 1M = 15,072,500 nano; 10 × $10 / 1M = 100,000 nano.
    expect(await reserved("big")).toBe(15_172_500);
  });
});
