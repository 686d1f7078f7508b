import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// promptCache `auto`: "Sightings within the TTL (this one included) before a prefix is written".
// placeAnthropicBreakpoints() counted three keys per request; for a request with one user turn the
// third key (the conversation up to the previous user turn, i.e. no messages) was the SAME key as
// the first (the system prompt alone): the system prefix was counted twice per request, so it was
// written (at 1.25x / 2x input price) on an earlier sighting than minRepeats says.

const rig = useMockedGateway({
  "cached-3": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { promptCache: { mode: "auto", ttl: "5m", minRepeats: 3 } } },
});

describe("promptCache auto, minRepeats 3", () => {
  // About 1,500 tokens: above claude-sonnet-4-6's 1,024-token minimum.
  const system = "You are a meticulous support agent for the min-repeats test. ".repeat(200);
  const ask = (order: number) => postJson(rig.gateway, "/v1/messages", { model: "cached-3", max_tokens: 20, system, messages: [{ role: "user", content: `Where is order ${order}?` }] });
  const sentSystem = () => rig.mocks.anthropic.requests.at(-1)!.body.system.at(-1);

  it("writes the system prompt on its third sighting, not its second", async () => {
    await ask(1);
    expect(sentSystem()).not.toHaveProperty("cache_control");

    const second = await ask(2);
    expect(second.status).toBe(200);
    expect(sentSystem()).not.toHaveProperty("cache_control");
    expect(second.headers.get("x-tollgate-policies")).toContain("prompt_cache=first-sighting");

    const third = await ask(3);
    expect(third.status).toBe(200);
    expect(sentSystem().cache_control).toEqual({ type: "ephemeral", ttl: "5m" });
  });
});
