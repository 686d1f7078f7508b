import { describe, expect, it } from "vitest";
import { useDecoderWithClouds } from "./support/decoder-rig.ts";
import { postJson } from "./support/gateway.ts";

// A decoder started without tool calling answers every request with tools with a 400: vLLM's
// body, as vllm/entrypoints/openai/serving_chat.py writes it (and as users quote it, e.g.
// langchain4j/langchain4j#3475). It is the target's setup, not the request: a route with a cloud
// target after it goes on to that one. Was: the 400 ended the route, though the next target
// could have answered.

const VLLM_TOOLS_OFF = { object: "error", message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', type: "BadRequestError", param: null, code: 400 };
const tools = [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: {} } } }];
const hi = [{ role: "user", content: "What is the weather?" }];

const rig = useDecoderWithClouds(
  (base) => ({ ...base, routes: { ...base.routes, "local-then-gpt": { targets: [{ provider: "local", model: "tiny-local" }, { provider: "openai", model: "gpt-4o" }] } } }),
  (_body, response) => {
    response.writeHead(400, { "content-type": "application/json" });
    response.end(JSON.stringify(VLLM_TOOLS_OFF));
  },
);

describe("a decoder whose tool calling is off", () => {
  it("hands a request with tools to the route's next target", async () => {
    rig.mocks.openai.enqueue({ kind: "tool-calls", calls: [{ id: "call_w", name: "weather", arguments: "{}" }] });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local-then-gpt", messages: hi, tools });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-provider")).toBe("openai");
  });

  it("alone on its route, is a 400 naming tools, saying what to change", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local", messages: hi, tools });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { param: string; message: string } };
    expect(error.param).toBe("tools");
    expect(error.message).toMatch(/cannot call tools as it runs: .*--enable-auto-tool-choice.*; send this request to a route whose model calls tools, or start the decoder with tool calling on/);
  });
});
