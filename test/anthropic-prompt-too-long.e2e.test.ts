import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Anthropic answers a prompt longer than the model's context with (captured, e.g.
// anthropics/claude-code#12186, boldsoftware/exe.dev#62, entropy-research/Devon#88):
//   400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}
// map-provider-error.ts gives OpenAI clients `code: "context_length_exceeded"` for OpenAI's own
// overflow and for the local decoders' wordings ("clients branch on them: an agent trims its
// history"), but not for Anthropic's: an OpenAI-dialect agent on a Claude route never trims.

const rig = useMockedGateway();

describe("an OpenAI client whose prompt is too long for the Claude model of its route", () => {
  it.each([false, true])("gets 400 code context_length_exceeded (stream: %s)", async (stream) => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 400, type: "invalid_request_error", message: "prompt is too long: 208310 tokens > 200000 maximum" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", stream, messages: [{ role: "user", content: "a very long history" }] });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe("context_length_exceeded");
  });
});
