import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// An OpenAI project may default to the priority tier (its settings), billed above the standard
// rates tollgate prices with: a request that names no tier, or "auto", is served at it, and its
// cost and reservation fall short of the invoice. `providers.<name>.serviceTier: "default"` asks
// for the default tier on every call instead.

const rig = useMockedGateway({}, [], { openai: { serviceTier: "default" } });
const hi = [{ role: "user" as const, content: "hi" }];

describe('a provider pinned to serviceTier "default"', () => {
  it('asks OpenAI for the default tier where the client names none, or "auto"', async () => {
    await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi });
    expect(rig.mocks.openai.requests.at(-1)!.body.service_tier).toBe("default");
    await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, service_tier: "auto" });
    expect(rig.mocks.openai.requests.at(-1)!.body.service_tier).toBe("default");
  });

  it("does so for an Anthropic client's request too, streamed", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", { model: "gpt", max_tokens: 20, stream: true, messages: hi });
    await response.text();
    expect(rig.mocks.openai.requests.at(-1)!.body.service_tier).toBe("default");
  });
});
