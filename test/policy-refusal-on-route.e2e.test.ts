import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// A target whose per-target step refuses a request (a 400 before any call) is one of two things.
// A refusal by the route's own rule (`"onUnsupported": "reject"`) is the client's 400: was, the
// route moved on to its fallback in silence, so a route [o3, gpt-4o] answered every request with
// a temperature from gpt-4o, o3 never called, and neither the record nor the headers said so.
// A target that cannot take the request (logprobs on a reasoning model) is passed over for the
// next, as before, and the answer now says which target was skipped and why.

const rig = useMockedGateway({
  "reject-then-fallback": {
    targets: [{ provider: "openai", model: "o3" }, { provider: "openai", model: "gpt-4o" }],
    policies: { sampling: { onUnsupported: "reject" } },
  },
  "reasoning-then-chat": { targets: [{ provider: "openai", model: "o3" }, { provider: "openai", model: "gpt-4o" }] },
});
const hi = [{ role: "user", content: "hi" }];
const models = () => rig.mocks.openai.requests.map((request) => request.body.model);

describe("a policy's refusal on a route with a fallback", () => {
  it('"onUnsupported": "reject" answers the 400 naming the field, and the fallback is not called', async () => {
    rig.mocks.openai.reset();
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "reject-then-fallback", messages: hi, temperature: 0.2 });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({
      param: "temperature",
      code: "unsupported_parameter",
      message: "temperature is not accepted by o3 (openai): remove temperature",
    });
    expect(models()).toEqual([]);
  });

  it("a request the first target takes is not refused", async () => {
    rig.mocks.openai.reset();
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "reject-then-fallback", messages: hi });
    expect(response.status).toBe(200);
    expect(models()).toEqual(["o3"]);
  });

  it("a target that cannot take the request is skipped for the next, and the answer and record say so", async () => {
    rig.mocks.openai.reset();
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "reasoning-then-chat", messages: hi, logprobs: true });
    expect(response.status).toBe(200);
    expect(models()).toEqual(["gpt-4o"]);
    expect(response.headers.get("x-tollgate-policies")).toContain("target=skipped:o3(logprobs)");
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.model).toBe("gpt-4o");
    expect(record.policies).toContain("target=skipped:o3(logprobs)");
    expect(record.warnings).toContain(
      "o3 (openai) was not called: logprobs: o3 (a reasoning model) gives no log probabilities: remove logprobs, or route this request to a model that gives them",
    );
  });
});
