import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { APP_KEY, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// promptCache `auto`: "Sightings within the TTL (this one included) before a prefix is written".
// placeAnthropicBreakpoints() counted three keys per request; for a request with one user turn the
// third key (the conversation up to the previous user turn, i.e. no messages) was the SAME key as
// the first (the system prompt alone): the system prefix was counted twice per request, so it was
// written (at 1.25x / 2x input price) on an earlier sighting than minRepeats says.

let mocks: MockProviders;
let gateway: TestGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startTestGateway({
    ...base,
    routes: {
      ...base.routes,
      "cached-3": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { promptCache: { mode: "auto", ttl: "5m", minRepeats: 3 } } },
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});
beforeEach(() => mocks.anthropic.reset());

const messages = (body: object) =>
  fetch(`${gateway.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": APP_KEY, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("promptCache auto, minRepeats 3", () => {
  // About 1,500 tokens: above claude-sonnet-4-6's 1,024-token minimum.
  const system = "You are a meticulous support agent for the min-repeats test. ".repeat(200);

  it("does not write the system prompt on its second sighting", async () => {
    await messages({ model: "cached-3", max_tokens: 20, system, messages: [{ role: "user", content: "Where is order 1?" }] });
    expect(JSON.stringify(mocks.anthropic.requests.at(-1)!.body)).not.toContain("cache_control");

    const second = await messages({ model: "cached-3", max_tokens: 20, system, messages: [{ role: "user", content: "Where is order 2?" }] });
    expect(second.status).toBe(200);
    // Seen twice, minRepeats 3: no breakpoint yet.
    expect(mocks.anthropic.requests.at(-1)!.body.system.at(-1)).not.toHaveProperty("cache_control");
    expect(second.headers.get("x-tollgate-policies")).toContain("prompt_cache=first-sighting");
  });
});
