import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// Claude Opus 4.1 and the 4.5 and later models refuse a request that sets both temperature and
// top_p (400 "`temperature` and `top_p` cannot both be specified for this model. Please use only
// one."; src/pricing/bundled-prices.ts lists the reports). The sampling guard drops top_p, with a
// warning in the record, whether the client sent both or a route default added one.
// Used to be wrong: both were sent, and the client got Anthropic's 400.

const rig = useMockedGateway({
  "sonnet-4-5": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }] },
  "haiku-4-5": { targets: [{ provider: "anthropic", model: "claude-haiku-4-5" }] },
  "sonnet-4-5-warm": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }], policies: { sampling: { temperature: { default: 0.7 } } } },
});

describe("temperature and top_p together on the Claude models that refuse the pair", () => {
  it.each(["sonnet-4-5", "haiku-4-5"])("a client's temperature + top_p: %s is sent only one of them", async (route) => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: route, messages: [{ role: "user", content: "hi" }], temperature: 0.2, top_p: 0.9 });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.temperature !== undefined && sent.top_p !== undefined).toBe(false);
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.warnings.join(" ")).toMatch(/temperature|top_p/);
  });

  it("a route's temperature default added to a client's top_p is not sent as the pair", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", { model: "sonnet-4-5-warm", max_tokens: 64, top_p: 0.9, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.temperature !== undefined && sent.top_p !== undefined).toBe(false);
  });
});
