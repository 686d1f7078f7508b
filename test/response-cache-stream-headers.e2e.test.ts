import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// x-tollgate-policies says what the route's policies changed. A streamed miss carries it in its
// headers, and a streamed hit of the same request (the same policies applied) does too. Was: the
// hit built its own headers, without it.

const rig = useMockedGateway({
  answers: { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { maxTokens: { default: 64 }, responseCache: { ttlSeconds: 60 } } },
});

describe("response cache: streamed hit headers", () => {
  it("a streamed hit carries x-tollgate-policies like the streamed miss did", async () => {
    const body = { model: "answers", messages: [{ role: "user", content: "hi" }], temperature: 0, stream: true };
    const miss = await postJson(rig.gateway, "/v1/chat/completions", body);
    await miss.text();
    expect(miss.headers.get("x-tollgate-cache")).toBe("miss");
    expect(miss.headers.get("x-tollgate-policies")).toContain("max_tokens=default:64");
    await new Promise((resolve) => setTimeout(resolve, 200)); // the answer is kept after the response
    const hit = await postJson(rig.gateway, "/v1/chat/completions", body);
    await hit.text();
    expect(hit.headers.get("x-tollgate-cache")).toBe("hit");
    expect(hit.headers.get("x-tollgate-policies")).toContain("max_tokens=default:64");
  });
});
