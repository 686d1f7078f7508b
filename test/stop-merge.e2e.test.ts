import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// The stop policy adds the route's sequences after the client's, de-duplicated.
// Used to be wrong: a client list that repeats a sequence (["END", "END"]) had the same length as
// the merge, so the route's sequence was silently dropped.

const rig = useMockedGateway({
  stopped: { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { stop: { sequences: ["\n\nUser:"] } } },
});

describe("stop policy merge", () => {
  it("adds the route's sequence even when the client repeats one of its own", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "stopped", messages: [{ role: "user", content: "hi" }], stop: ["END", "END"] });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.stop).toContain("\n\nUser:");
  });
});
