import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// A refusal or a content filter's stop comes from the provider's safety systems, not from the
// sampler: asked again, the provider may well answer. Kept in the response cache, one false
// refusal was served to the whole team for the cache's TTL. Such answers are not kept.

const cached = (provider: string, model: string) => ({ targets: [{ provider, model }], policies: { responseCache: { ttlSeconds: 60 } } });
const rig = useMockedGateway({ "cached-gpt": cached("openai", "gpt-4o"), "cached-claude": cached("anthropic", "claude-sonnet-4-6") });

/** Sends `body` twice and says where the second answer came from. */
async function secondAnswer(path: string, body: object): Promise<string | null> {
  const first = await postJson(rig.gateway, path, body);
  expect(first.status).toBe(200);
  await waitForRecord(rig.gateway, first.headers.get("x-tollgate-request-id")!);
  const second = await postJson(rig.gateway, path, body);
  expect(second.status).toBe(200);
  return second.headers.get("x-tollgate-cache");
}

describe("the response cache", () => {
  it("keeps an ordinary answer (so the tests below can fail)", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "blue" });
    expect(await secondAnswer("/v1/chat/completions", { model: "cached-gpt", temperature: 0, messages: [{ role: "user", content: "Name a colour" }] })).toBe("hit");
  });

  it("does not keep an answer OpenAI's content filter stopped", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "", finishReason: "content_filter" });
    expect(await secondAnswer("/v1/chat/completions", { model: "cached-gpt", temperature: 0, messages: [{ role: "user", content: "filtered?" }] })).toBe("miss");
  });

  it("does not keep Claude's refusal", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "I can't help with that.", stopReason: "refusal", refusal: { category: "cyber", explanation: null } });
    expect(await secondAnswer("/v1/messages", { model: "cached-claude", max_tokens: 50, temperature: 0, messages: [{ role: "user", content: "refused?" }] })).toBe("miss");
  });
});
