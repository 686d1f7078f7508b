import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve-config.ts";
import { PriceBook } from "../metering/price-book.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import { CheapestFirst, orderTargets, type TargetWeight } from "./cheapest-first.ts";
import { LATENCY_WINDOW_MS, TargetLatency } from "./target-latency.ts";

const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test" };

function gatewayParts(routes: Record<string, unknown>, openai: Record<string, unknown> = {}) {
  const config = resolveConfig(
    {
      providers: {
        openai: { type: "openai", apiKey: { env: "OPENAI_API_KEY" }, ...openai },
        anthropic: { type: "anthropic", apiKey: { env: "ANTHROPIC_API_KEY" } },
        // $2 per GPU hour at 5,000 prompt and 100 generated tokens per second.
        local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:1/v1", pricing: { default: { gpuHourUsd: 2, inputTokensPerSecond: 5000, outputTokensPerSecond: 100 } } },
        unpriced: { type: "openai-compatible", baseUrl: "http://127.0.0.1:2/v1" },
      },
      routes,
    },
    ENV,
  );
  let now = 0;
  const latency = new TargetLatency(() => now);
  const order = new CheapestFirst(config, new PriceBook(config.providers), latency);
  return { config, order, advance: (ms: number) => (now += ms) };
}

/** A one-message request whose prompt bound is `bytes` (the text plus 16 bytes of framing margin). */
function request(bytes: number, maxTokens?: number, stream = false): ChatRequest {
  return { route: "r", messages: [{ role: "user", content: [{ type: "text", text: "x".repeat(bytes - 16) }] }], stream, streamUsage: false, ...(maxTokens === undefined ? {} : { maxTokens }) } as ChatRequest;
}

const names = (route: { targets: { provider: string; model: string }[] }) => route.targets.map((target) => `${target.provider}/${target.model}`);

describe("orderTargets", () => {
  const weights: Record<string, TargetWeight> = {
    a: { costNano: 300, latencyMs: undefined },
    b: { costNano: 100, latencyMs: 50 },
    c: { costNano: undefined, latencyMs: undefined },
    d: { costNano: 100, latencyMs: undefined },
    e: { costNano: 10, latencyMs: 900 },
    f: { costNano: 20, latencyMs: 400 },
  };
  const weigh = (name: string) => weights[name]!;

  it("puts the cheapest first, keeps the route's order between equals, and unpriced targets last", () => {
    expect(orderTargets(["a", "b", "c", "d"], weigh, undefined)).toEqual(["b", "d", "a", "c"]);
  });

  it("with a goal, tries targets over it last, fastest first, whatever they cost", () => {
    expect(orderTargets(["a", "b", "c", "d", "e", "f"], weigh, 200)).toEqual(["b", "d", "a", "c", "f", "e"]);
  });

  it("a target not measured yet counts as meeting the goal", () => {
    expect(orderTargets(["e", "a"], weigh, 200)).toEqual(["a", "e"]);
    expect(orderTargets(["e", "a"], weigh, 1000)).toEqual(["e", "a"]);
  });
});

describe("CheapestFirst", () => {
  it("weighs this request's expected cost at each target's prices (exact nano-dollars)", () => {
    const { config, order } = gatewayParts({
      r: { strategy: "cheapest", targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }, { provider: "openai", model: "gpt-4o-mini" }] },
    });
    // 400 bytes ≈ 100 tokens of prompt, and max_tokens 1000:
    //   claude-sonnet-4-6 ($3 / $15 per 1M):   100 × 3,000 + 1000 × 15,000 = 15,300,000
    //   gpt-4o            ($2.50 / $10):        100 × 2,500 + 1000 × 10,000 = 10,250,000
    //   gpt-4o-mini       ($0.15 / $0.60):      100 × 150   + 1000 × 600    =    615,000
    const asked = request(400, 1000);
    expect(config.routes.r!.targets.map((target) => order.expectedCostNano(target, asked))).toEqual([15_300_000, 10_250_000, 615_000]);
    expect(names(order.routeFor(asked, config.routes.r!))).toEqual(["openai/gpt-4o-mini", "openai/gpt-4o", "anthropic/claude-sonnet-4-6"]);
  });

  it('weighs an OpenAI provider pinned to "priority" at its priority prices', () => {
    const { config, order } = gatewayParts(
      { r: { strategy: "cheapest", targets: [{ provider: "openai", model: "gpt-4o" }, { provider: "anthropic", model: "claude-sonnet-4-6" }] } },
      { serviceTier: "priority" },
    );
    // gpt-4o at priority ($4.25 / $17 per 1M): 100 × 4,250 + 1000 × 17,000 = 17,425,000, above
    // claude-sonnet-4-6's 15,300,000 (at the standard $2.50 / $10 it was the cheaper, 10,250,000).
    const asked = request(400, 1000);
    expect(config.routes.r!.targets.map((target) => order.expectedCostNano(target, asked))).toEqual([17_425_000, 15_300_000]);
    expect(names(order.routeFor(asked, config.routes.r!))).toEqual(["anthropic/claude-sonnet-4-6", "openai/gpt-4o"]);
  });

  it("the order follows the request: a long prompt favours the cheaper input, a long answer the cheaper output", () => {
    const { config, order } = gatewayParts({
      r: { strategy: "cheapest", targets: [{ provider: "openai", model: "o4-mini" }, { provider: "anthropic", model: "claude-haiku-4-5" }] },
    });
    const route = config.routes.r!;
    // o4-mini $1.10 / $4.40, claude-haiku-4-5 $1 / $5 per 1M.
    // 100 prompt tokens, 1000 out: o4-mini 110,000 + 4,400,000 = 4,510,000; haiku 100,000 + 5,000,000 = 5,100,000.
    const shortPrompt = request(400, 1000);
    expect(route.targets.map((target) => order.expectedCostNano(target, shortPrompt))).toEqual([4_510_000, 5_100_000]);
    expect(names(order.routeFor(shortPrompt, route))).toEqual(["openai/o4-mini", "anthropic/claude-haiku-4-5"]);
    // 100,000 prompt tokens, 10 out: o4-mini 110,000,000 + 44,000 = 110,044,000; haiku 100,000,000 + 50,000 = 100,050,000.
    const longPrompt = request(400_000, 10);
    expect(route.targets.map((target) => order.expectedCostNano(target, longPrompt))).toEqual([110_044_000, 100_050_000]);
    expect(names(order.routeFor(longPrompt, route))).toEqual(["anthropic/claude-haiku-4-5", "openai/o4-mini"]);
  });

  it("prices a local decoder from its GPU hour, and a request without max_tokens at 4,096 tokens out on every target", () => {
    const { config, order } = gatewayParts({
      r: { strategy: "cheapest", targets: [{ provider: "openai", model: "gpt-4o" }, { provider: "local", model: "tiny" }, { provider: "unpriced", model: "x" }] },
    });
    const route = config.routes.r!;
    // No max_tokens: 4,096 tokens out on each (not gpt-4o's 16,384-token maximum: how long an
    // answer is depends on the question, so one length is weighed for every target).
    //   gpt-4o: 100 × 2,500 + 4,096 × 10,000 = 41,210,000
    //   local: $2 / 3600 s over 5,000 and 100 tokens/s (computeCost's rates, rounded once per record)
    const asked = request(400);
    const [gpt, local, unpriced] = route.targets.map((target) => order.expectedCostNano(target, asked));
    expect(gpt).toBe(41_210_000);
    // 100 / (5000 × 3600) × $2 = $0.0000111111 and 4096 / (100 × 3600) × $2 = $0.0227555556 → 22,766,667 nano.
    expect(local).toBe(22_766_667);
    expect(unpriced).toBeUndefined();
    expect(names(order.routeFor(asked, route))).toEqual(["local/tiny", "openai/gpt-4o", "unpriced/x"]);
  });

  it("without max_tokens, weighs one answer length on every target (used to weigh each target's own maximum)", () => {
    const { config, order } = gatewayParts({
      r: { strategy: "cheapest", targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
    });
    // gpt-4o is cheaper per token both ways ($2.50 / $10 against $3 / $15); weighed at its own
    // 16,384-token maximum against Claude's 4,096 default, it looked dearer.
    //   claude-sonnet-4-6: 100 × 3,000 + 4,096 × 15,000 = 61,740,000; gpt-4o: 41,210,000.
    const asked = request(400);
    expect(config.routes.r!.targets.map((target) => order.expectedCostNano(target, asked))).toEqual([61_740_000, 41_210_000]);
    expect(names(order.routeFor(asked, config.routes.r!))).toEqual(["openai/gpt-4o", "anthropic/claude-sonnet-4-6"]);
  });

  it("tries a target that missed the latency goal last, until its slow calls are older than the window", () => {
    const { config, order, advance } = gatewayParts({
      r: { strategy: "cheapest", latencyGoalMs: 500, targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o-mini" }] },
    });
    const route = config.routes.r!;
    const streamed = request(400, 100, true);
    // Two slow calls are not yet a judgement (a cold start must not demote a cheap target).
    for (const ms of [900, 800]) order.latency.observe("openai", "gpt-4o-mini", true, ms);
    expect(names(order.routeFor(streamed, route))[0]).toBe("openai/gpt-4o-mini");
    // A third, fast: 900, 800 and 300 ms, median 800, over the goal.
    order.latency.observe("openai", "gpt-4o-mini", true, 300);
    for (const ms of [200, 200, 200]) order.latency.observe("anthropic", "claude-sonnet-4-6", true, ms);
    expect(names(order.routeFor(streamed, route))).toEqual(["anthropic/claude-sonnet-4-6", "openai/gpt-4o-mini"]);
    // Whole answers are judged by their own times, of which there are none yet.
    expect(names(order.routeFor(request(400, 100, false), route))).toEqual(["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-6"]);
    // One fast call more: 300, 300, 800, 900, whose median is 550 ms, still over.
    order.latency.observe("openai", "gpt-4o-mini", true, 300);
    expect(names(order.routeFor(streamed, route))[0]).toBe("anthropic/claude-sonnet-4-6");
    order.latency.observe("openai", "gpt-4o-mini", true, 300);
    // 300, 300, 300, 800, 900: median 300, within the goal again.
    expect(names(order.routeFor(streamed, route))[0]).toBe("openai/gpt-4o-mini");
    // A slow spell, then the window passes with no calls: the target is tried (and measured) again.
    for (const ms of [2000, 2000, 2000, 2000, 2000, 2000]) order.latency.observe("openai", "gpt-4o-mini", true, ms);
    expect(names(order.routeFor(streamed, route))[0]).toBe("anthropic/claude-sonnet-4-6");
    advance(LATENCY_WINDOW_MS + 1);
    expect(names(order.routeFor(streamed, route))[0]).toBe("openai/gpt-4o-mini");
  });

  it("leaves a fallback route's order alone", () => {
    const { config, order } = gatewayParts({
      r: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o-mini" }] },
    });
    expect(order.routeFor(request(400, 100), config.routes.r!)).toBe(config.routes.r);
  });
});

describe("config", () => {
  it("refuses a latency goal on a route that does not order by cost, naming the fix", () => {
    expect(() => gatewayParts({ r: { latencyGoalMs: 500, targets: [{ provider: "openai", model: "gpt-4o" }] } })).toThrow(/routes\.r\.latencyGoalMs.*"strategy": "cheapest"/s);
  });

  it("refuses an unknown strategy with the ones it knows", () => {
    expect(() => gatewayParts({ r: { strategy: "random", targets: [{ provider: "openai", model: "gpt-4o" }] } })).toThrow(/routes\.r\.strategy.*"fallback".*"cheapest"/s);
  });
});
