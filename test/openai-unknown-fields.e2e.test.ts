import type { ChatCompletionCreateParamsBase } from "openai/resources/chat/completions/completions";
import { describe, expect, it } from "vitest";
import { openAIChatRequestSchema } from "../src/dialects/openai/openai-request-schema.ts";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// A top-level field tollgate does not know is a 400 naming it, as OpenAI answers one
// ("Unrecognized request argument supplied: X"). Was: stripped in silence, so a misspelt option
// (max_token) or one tollgate does not carry went unnoticed, with a 200 from a model that never
// saw it.

const rig = useMockedGateway();
const hi = [{ role: "user" as const, content: "hi" }];

// Every body field of the openai SDK's ChatCompletionCreateParams is declared in the schema
// (carried, dropped with a note, accepted and ignored, or refused on purpose): a field a newer SDK
// adds fails to compile here until it is decided on.
type Undeclared = Exclude<keyof ChatCompletionCreateParamsBase, keyof typeof openAIChatRequestSchema.shape>;
const everySdkFieldDeclared: [Undeclared] extends [never] ? true : Undeclared = true;

describe("a top-level field tollgate does not know", () => {
  it("is a 400 naming it, before any provider is called", async () => {
    expect(everySdkFieldDeclared).toBe(true);
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: hi, max_token: 50 });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: "max_token", message: "max_token: tollgate does not carry this field; remove it" });
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("names the others too when there are several", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: hi, best_of: 2, echo: true });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "best_of", message: "best_of: tollgate does not carry this field (nor echo); remove it" });
  });

  it("legacy function_call is refused saying what to send instead", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: hi, function_call: "auto" });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "function_call", message: expect.stringContaining("send `tools` and `tool_choice` instead") });
  });

  it("a request with every field the SDK and the local decoders' options declare is not refused for its fields", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "gpt",
      messages: hi,
      stream: false,
      stream_options: null,
      max_completion_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      seed: 1,
      frequency_penalty: 0,
      presence_penalty: 0,
      logit_bias: {},
      stop: null,
      n: 1,
      tools: null,
      tool_choice: null,
      parallel_tool_calls: null,
      reasoning_effort: null,
      response_format: null,
      user: "u",
      safety_identifier: "s",
      prompt_cache_key: "k",
      prompt_cache_retention: null,
      prompt_cache_options: null,
      verbosity: null,
      service_tier: "auto",
      store: false,
      metadata: null,
      logprobs: false,
      prediction: null,
      moderation: null,
      modalities: ["text"],
      audio: null,
      web_search_options: null,
      // The local decoders' own options, dropped with a note for OpenAI.
      top_k: 40,
      min_p: 0.05,
      repetition_penalty: 1.1,
      min_tokens: 1,
      ignore_eos: false,
      stop_token_ids: [2],
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(response.status).toBe(200);
  });
});
