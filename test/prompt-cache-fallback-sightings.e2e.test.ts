import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// promptCache auto, minRepeats 2: a prefix is written (1.25x input) only on its second sighting.
// A fallback attempt of the SAME request (a second Anthropic account with the same model, or the
// same target listed twice as a retry) is not a second sighting. Was: the policy counted a sighting
// per call, and the sightings ignored the provider, so the fallback call wrote the cache.

let mocks: MockProviders;
let gateway: TestGateway;
const auto = { promptCache: { mode: "auto", ttl: "5m", minRepeats: 2 } };

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startTestGateway({
    ...base,
    providers: { ...base.providers, "anthropic-backup": { type: "anthropic", apiKey: { env: "ANTHROPIC_API_KEY" } } },
    routes: {
      ...base.routes,
      "two-accounts": {
        targets: [
          { provider: "anthropic", model: "claude-sonnet-4-6" },
          { provider: "anthropic-backup", model: "claude-sonnet-4-6" },
        ],
        policies: auto,
      },
      retry: {
        targets: [
          { provider: "anthropic", model: "claude-sonnet-4-6" },
          { provider: "anthropic", model: "claude-sonnet-4-6" },
        ],
        policies: auto,
      },
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});

const longSystem = (tag: string) => Array.from({ length: 1500 }, (_, i) => `${tag}${i}`).join(" ");

describe("prompt cache sightings across one request's own fallback attempts", () => {
  for (const route of ["two-accounts", "retry"]) {
    it(`${route}: a first-ever prefix gets no breakpoint on the fallback attempt`, async () => {
      mocks.anthropic.reset();
      mocks.anthropic.enqueue({ kind: "http-error", status: 529, type: "overloaded_error" });
      const response = await postJson(gateway, "/v1/messages", { model: route, max_tokens: 50, system: longSystem(route), messages: [{ role: "user", content: "hello" }] });
      expect(response.status).toBe(200);
      expect(mocks.anthropic.requests).toHaveLength(2);
      const first = JSON.stringify(mocks.anthropic.requests[0]!.body);
      const second = JSON.stringify(mocks.anthropic.requests[1]!.body);
      const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
      expect(first).not.toContain("cache_control"); // first sighting: right
      expect({ policies: record.policies, secondHasBreakpoint: second.includes("cache_control") }).toEqual({
        policies: expect.arrayContaining(["prompt_cache=first-sighting"]),
        secondHasBreakpoint: false,
      });
    });
  }
});
