import { describe, expect, it } from "vitest";
import { convertToOpenAIRequest } from "../adapters/openai/convert-to-openai-request.ts";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// OpenAI: an assistant message's `content` is "Required unless tool_calls or function_call is
// specified"; `null` without tool_calls is refused with
//   400 {"error":{"message":"Invalid value for 'content': expected a string, got null.","type":"invalid_request_error","param":"messages.[1].content","code":null}}
// (run-llama/llama_index#17921, vercel/ai#13744, docker/docker-agent#63). An OpenAI client that
// replays an empty answer as `{"role":"assistant","content":""}` (accepted by OpenAI) has it
// rewritten by tollgate to `content: null`.

describe("an empty assistant turn sent to OpenAI", () => {
  it("is not sent as content: null without tool_calls (convertToOpenAIRequest)", () => {
    const body = convertToOpenAIRequest(
      {
        route: "gpt",
        stream: false,
        streamUsage: false,
        messages: [
          { role: "user", content: [{ type: "text", text: "hi" }] },
          { role: "assistant", content: [] },
          { role: "user", content: [{ type: "text", text: "still there?" }] },
        ],
      },
      "gpt-4o",
      "openai",
    );
    const assistant = body.messages[1] as { content: unknown; tool_calls?: unknown };
    expect(assistant.tool_calls === undefined && assistant.content === null).toBe(false);
  });

  const rig = useMockedGateway();

  it("an OpenAI client's content \"\" reaches OpenAI as a string, as the client sent it", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "gpt",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "" },
        { role: "user", content: "still there?" },
      ],
    });
    expect(response.status).toBe(200);
    const sent = rig.mocks.openai.requests.at(-1)!.body;
    expect(typeof sent.messages[1].content).toBe("string");
  });
});
