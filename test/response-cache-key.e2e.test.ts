import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// The response cache keys on the neutral ChatRequest (policies/response-cache/response-cache.ts).
// Request fields the OpenAI dialect did not model (frequency_penalty, logit_bias) used to be
// stripped, so two different requests got one key, and the second was answered with the first
// one's cached answer. They are carried now, and so part of the key.

const rig = useMockedGateway({ answers: { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { responseCache: { ttlSeconds: 60 } } } });
const chat = (body: object) => postJson(rig.gateway, "/v1/chat/completions", body);

describe("response cache keys", () => {
  it("two requests that differ only in penalties never share a cached answer", async () => {
    const messages = [{ role: "user", content: "Name a colour" }];
    rig.mocks.openai.enqueue({ kind: "text", text: "red red red red" });
    const first = await chat({ model: "answers", temperature: 0, messages, frequency_penalty: 2, logit_bias: { "1234": -100 } });
    expect(first.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body).toMatchObject({ frequency_penalty: 2, logit_bias: { "1234": -100 } });

    rig.mocks.openai.enqueue({ kind: "text", text: "blue" });
    const second = await chat({ model: "answers", temperature: 0, messages });
    expect(second.headers.get("x-tollgate-cache")).toBe("miss");
    expect((await second.json()).choices[0].message.content).toBe("blue");
    expect(rig.mocks.openai.requests).toHaveLength(2);
  });
});
