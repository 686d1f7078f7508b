import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { APP_KEY, startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { createOpenAICompatibleAdapter } from "../adapters/openai-compatible/create-openai-compatible-adapter.ts";
import { startLlamaServer, TINY_LOCAL_ANSWER, TINY_LOCAL_ANSWER_TOKENS } from "./support/llama-server.ts";

// Both official SDKs through tollgate to a REAL llama.cpp llama-server running a tiny model.
// Where the decoder cannot be fetched, startLlamaServer prints one loud line and these skip.

const decoder = await startLlamaServer();

afterAll(async () => {
  if (!("skipped" in decoder)) await decoder.stop();
});

// `undici` is the production transport; `fetch` lets msw's events show what llama-server received.
describe.skipIf("skipped" in decoder).each(["undici", "fetch"] as const)("local decoder (llama-server) over %s", (transport) => {
  let mocks: MockProviders;
  let gateway: TestGateway;
  // msw lets requests to llama-server through; its events still show exactly what was sent.
  const sentToDecoder: Record<string, unknown>[] = [];

  beforeAll(async () => {
    if ("skipped" in decoder) return;
    sentToDecoder.length = 0;
    mocks = startMockProviders();
    mocks.server.events.on("request:start", async ({ request }) => {
      if (request.url.startsWith(decoder.baseUrl)) sentToDecoder.push(await request.clone().json());
    });
    const config = testConfig(decoder.baseUrl);
    gateway = await startTestGateway(
      {
        ...config,
        routes: {
          ...config.routes,
          "local-cached": { targets: [{ provider: "local", model: "tiny-local" }], policies: { promptCache: { mode: "auto" } } },
          // gpt-4o written first; the GPU-hour price makes the local decoder the cheaper place.
          "gpt-or-local": { strategy: "cheapest", targets: [{ provider: "openai", model: "gpt-4o" }, { provider: "local", model: "tiny-local" }] },
        },
      },
      transport,
    );
  });
  afterAll(async () => {
    await gateway?.close();
    mocks?.close();
  });

  it("answers the OpenAI SDK non-streaming, passing top_k and min_p and reading usage", async () => {
    const { data, response } = await gateway.openai.chat.completions
      .create({ model: "local", messages: [{ role: "user", content: "hi" }], max_tokens: 32, top_k: 1, min_p: 0.05, temperature: 0 } as never)
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(TINY_LOCAL_ANSWER);
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.usage?.completion_tokens).toBe(TINY_LOCAL_ANSWER_TOKENS);
    expect(data.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-tollgate-provider")).toBe("local");
    expect(response.headers.get("x-tollgate-output-tokens")).toBe(String(TINY_LOCAL_ANSWER_TOKENS));
    // Local decoders get max_tokens (not max_completion_tokens) and their sampling extensions.
    if (transport === "fetch") expect(sentToDecoder.at(-1)).toMatchObject({ model: "tiny-local", max_tokens: 32, top_k: 1, min_p: 0.05, temperature: 0 });
  });

  it("gives the log probabilities llama-server gives, streamed and not", async () => {
    const ask = { messages: [{ role: "user" as const, content: "hi" }], max_tokens: 4, temperature: 0, logprobs: true, top_logprobs: 2 };
    const { baseUrl } = decoder as Exclude<typeof decoder, { skipped: string }>;
    const direct = await new OpenAI({ baseURL: baseUrl, apiKey: "unused" }).chat.completions.create({ model: "tiny-local", ...ask });
    const through = await gateway.openai.chat.completions.create({ model: "local", ...ask });
    const tokens = (content: OpenAI.Chat.Completions.ChatCompletionTokenLogprob[] | null | undefined) => (content ?? []).map(({ token, top_logprobs }) => ({ token, alternatives: top_logprobs.length }));
    expect(tokens(direct.choices[0]!.logprobs?.content).length).toBeGreaterThan(0);
    expect(tokens(through.choices[0]!.logprobs?.content)).toEqual(tokens(direct.choices[0]!.logprobs?.content));
    const stream = await gateway.openai.chat.completions.create({ model: "local", ...ask, stream: true });
    let streamed: OpenAI.Chat.Completions.ChatCompletionTokenLogprob[] = [];
    for await (const chunk of stream) streamed = [...streamed, ...(chunk.choices[0]?.logprobs?.content ?? [])];
    expect(tokens(streamed)).toEqual(tokens(direct.choices[0]!.logprobs?.content));
  });

  // llama-server reads `top_logprobs` as n_probs, defaulting to 20: 0 turns log probabilities off
  // (the choice has none), and none asked for gives 20 alternatives. OpenAI's meaning: 0 to 20
  // alternatives, none by default. Was: logprobs null for 0, and 20 alternatives unasked.
  it("gives OpenAI's meaning of top_logprobs: 0 or none asked for is each token without alternatives", async () => {
    for (const top of [{ top_logprobs: 0 }, {}]) {
      const ask = { model: "local", messages: [{ role: "user" as const, content: "hi" }], max_tokens: 3, temperature: 0, logprobs: true, ...top };
      const completion = await gateway.openai.chat.completions.create(ask);
      expect(completion.choices[0]!.logprobs?.content?.map((token) => token.top_logprobs.length)).toEqual([0, 0, 0]);
      const stream = await gateway.openai.chat.completions.create({ ...ask, stream: true });
      const alternatives: number[] = [];
      for await (const chunk of stream) for (const token of chunk.choices[0]?.logprobs?.content ?? []) alternatives.push(token.top_logprobs.length);
      expect(alternatives).toEqual([0, 0, 0]);
    }
  });

  // An Anthropic client's conversation ending with its own assistant turn is a prefill: the answer
  // is the continuation only, which the client joins to its prefill. llama-server continues the
  // turn, but its answer not streamed starts with the prefill again; vLLM and SGLang start a new
  // turn unless asked to continue (continue_final_message). Was: the prefill came back twice.
  it("continues an Anthropic client's prefill, and the answer is the continuation only, streamed or not", async () => {
    const ask = {
      model: "local",
      max_tokens: 16,
      temperature: 0,
      messages: [
        { role: "user" as const, content: "Answer in JSON" },
        { role: "assistant" as const, content: '{"answer": "' },
      ],
    };
    const textOf = (message: Anthropic.Messages.Message) => message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    const streamed = textOf(await gateway.anthropic.messages.stream(ask).finalMessage());
    const whole = textOf(await gateway.anthropic.messages.create(ask));
    expect(whole).toBe(streamed);
    expect(whole.startsWith('{"answer": "')).toBe(false);
    if (transport === "fetch") expect(sentToDecoder.at(-1)).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    // An OpenAI conversation ending with an assistant message asks for a new one: not continued.
    await gateway.openai.chat.completions.create({ model: "local", max_tokens: 4, messages: ask.messages });
    if (transport === "fetch") expect(sentToDecoder.at(-1)).not.toHaveProperty("continue_final_message");
  });

  it("takes a message's participant name, which OpenAI-shaped targets are sent", async () => {
    const completion = await gateway.openai.chat.completions.create({ model: "local", messages: [{ role: "user", name: "alice", content: "hi" }], max_tokens: 8, temperature: 0 });
    expect(completion.choices[0]?.message.content?.length).toBeGreaterThan(0);
    if (transport === "fetch") expect(sentToDecoder.at(-1)).toMatchObject({ messages: [{ role: "user", name: "alice", content: "hi" }] });
  });

  it("counts tokens for the Anthropic SDK with llama-server's own template and tokenizer: what a chat on the route bills", async () => {
    // Several system blocks (as Claude Code sends) and two user turns in a row: the chat sends
    // them apart, and the count must too.
    const prompt = {
      system: [
        { type: "text" as const, text: "You answer in one short sentence." },
        { type: "text" as const, text: "Today's date is 2026-11-24." },
      ],
      messages: [
        { role: "user" as const, content: "hi" },
        { role: "assistant" as const, content: "Hello! How can I help?" },
        { role: "user" as const, content: "Count these words for me, please." },
        { role: "user" as const, content: "And these." },
      ],
    };
    const { data, response } = await gateway.anthropic.messages.countTokens({ model: "local", ...prompt }).withResponse();
    expect(response.headers.get("x-tollgate-estimated")).toBeNull();
    expect(response.headers.get("x-tollgate-provider")).toBe("local");
    const chat = await gateway.anthropic.messages.create({ model: "local", max_tokens: 4, ...prompt });
    expect(data.input_tokens).toBe(chat.usage.input_tokens + (chat.usage.cache_read_input_tokens ?? 0) + (chat.usage.cache_creation_input_tokens ?? 0));
  });

  // A request the decoder refuses (a schema with a $ref to nothing, which llama-server cannot turn
  // into a grammar) is that request's failure, told as a chat's would be. It was read as "this
  // decoder cannot count", and every count for the next 10 minutes was tollgate's estimate.
  it("passes on the decoder's 400 for one count, and still counts the next one itself", async () => {
    const schema = { type: "object", properties: { a: { $ref: "#/nowhere" } } };
    const refused = (await gateway.anthropic.messages
      .countTokens({ model: "local", messages: [{ role: "user", content: "hi" }], output_config: { format: { type: "json_schema", schema } } })
      .catch((error: unknown) => error)) as InstanceType<typeof Anthropic.APIError>;
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    const { response } = await gateway.anthropic.messages.countTokens({ model: "local", messages: [{ role: "user", content: "how many tokens is this" }] }).withResponse();
    expect(response.headers.get("x-tollgate-estimated")).toBeNull();
  });

  // llama-server answers a 500 "image input is not supported" when its model has no vision
  // projector. It was a 502 that the SDKs retried twice; it is the request's, so a 400.
  it("refuses an image the model cannot read with a 400 that the SDK does not retry", async () => {
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const before = sentToDecoder.length;
    const retrying = new Anthropic({ baseURL: gateway.url, apiKey: APP_KEY, maxRetries: 2 });
    const failure = (await retrying.messages
      .create({ model: "local", max_tokens: 8, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: png } }, { type: "text", text: "what is this?" }] }] })
      .catch((error: unknown) => error)) as InstanceType<typeof Anthropic.APIError>;
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
    expect(failure.message).toMatch(/cannot read this request's input: image input is not supported/);
    if (transport === "fetch") expect(sentToDecoder.length - before).toBe(1);
  });

  it("streams to the OpenAI SDK with the usage chunk when asked", async () => {
    const stream = await gateway.openai.chat.completions.create({
      model: "local",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage;
    let contentChunks = 0;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content;
      if (delta) contentChunks++;
      text += delta ?? "";
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(TINY_LOCAL_ANSWER);
    expect(contentChunks).toBeGreaterThan(3);
    expect(usage?.completion_tokens).toBe(TINY_LOCAL_ANSWER_TOKENS);
    if (transport === "fetch") expect(sentToDecoder.at(-1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("answers the Anthropic SDK, streamed, with max_tokens mapped to stop_reason max_tokens", async () => {
    const message = await gateway.anthropic.messages
      .stream({ model: "local", max_tokens: 3, system: "You are tiny.", top_k: 1, messages: [{ role: "user", content: "hi" }] } as never)
      .finalMessage();
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.usage.output_tokens).toBe(3);
    expect(message.content[0]?.type === "text" ? message.content[0].text : "").toBe("Hello from a");
    if (transport === "fetch") expect(sentToDecoder.at(-1)).toMatchObject({ max_tokens: 3, top_k: 1, messages: [{ role: "system", content: "You are tiny." }, { role: "user", content: "hi" }] });
  });

  it("reads llama-server's usage and timings into stream parts (the adapter on its own)", async () => {
    if ("skipped" in decoder) return;
    const adapter = createOpenAICompatibleAdapter({ name: "local", baseUrl: decoder.baseUrl });
    const request = { route: "local", stream: true, streamUsage: false, messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }] };
    const parts = [];
    for await (const part of adapter.stream(request, "tiny-local", new AbortController().signal)) parts.push(part);
    const timings = parts.flatMap((part) => (part.type === "decoder-timings" ? [part.timings] : []));
    expect(timings).toHaveLength(1);
    expect(timings[0]!.generatedTokens).toBe(TINY_LOCAL_ANSWER_TOKENS);
    expect(timings[0]!.promptTokens + (timings[0]!.cachedTokens ?? 0)).toBeGreaterThan(0);
    const usage = parts.flatMap((part) => (part.type === "usage" ? [part.usage] : []));
    expect(usage.at(-1)?.outputTokens).toBe(TINY_LOCAL_ANSWER_TOKENS);
    expect(parts.filter((part) => part.type === "finish")).toEqual([{ type: "finish", reason: "stop" }]);
  });

  it("records a streamed answer's cost at the GPU-hour price, with llama-server's own token counts", async () => {
    const { data: stream, response } = await gateway.anthropic.messages
      .create({ model: "local", max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi there" }] })
      .withResponse();
    for await (const _event of stream) {
      // drain
    }
    const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record).toMatchObject({ provider: "local", model: "tiny-local", status: "ok", estimated: false, unpriced: false });
    expect(record.usage.outputTokens).toBe(TINY_LOCAL_ANSWER_TOKENS);
    const { inputTokens, cacheReadTokens } = record.usage;
    expect(inputTokens + cacheReadTokens).toBeGreaterThan(0);
    // $2/h: 2e12 pico / (5000 × 3600) = 111,111 pico per prompt token, 2e12 / (100 × 3600) =
    // 5,555,556 per generated token; prefix-cache hits are free. 8 × 5,555,556 pico = 44,444 nano.
    expect(record.cost.outputNano).toBe(44_444);
    expect(record.cost.inputNano).toBe(Math.round((inputTokens * 111_111) / 1000));
    expect(record.cost.cacheReadNano).toBe(0);
    expect(record.cost.totalNano).toBe(record.cost.inputNano + 44_444);
    expect(record.upstreamTtftMs).toBeGreaterThan(0);
    expect(record.outputTokensPerSecond).toBeGreaterThan(0);
  });

  it("asks llama-server to reuse its prefix cache on a route with prompt caching", async () => {
    const { data, response } = await gateway.openai.chat.completions
      .create({ model: "local-cached", messages: [{ role: "user", content: "hi" }], max_tokens: 32 })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(TINY_LOCAL_ANSWER);
    expect(response.headers.get("x-tollgate-policies")).toContain("prompt_cache=reuse-prefix");
    if (transport === "fetch") expect(sentToDecoder.at(-1)).toMatchObject({ cache_prompt: true });
    const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.policies).toContain("prompt_cache=reuse-prefix");
  });

  it('sends a "cheapest" route\'s request to the local decoder when it costs less there than on the cloud', async () => {
    // 32 tokens out at most: gpt-4o $10 per 1M → 320,000 nano; the decoder $2 per GPU hour at 100
    // generated tokens/s → 177,778 nano, and its prompt a fraction of gpt-4o's.
    const { data, response } = await gateway.openai.chat.completions.create({ model: "gpt-or-local", messages: [{ role: "user", content: "hi" }], max_tokens: 32 }).withResponse();
    expect(response.headers.get("x-tollgate-provider")).toBe("local");
    expect(data.choices[0]?.message.content).toBe(TINY_LOCAL_ANSWER);
    expect(mocks.openai.requests).toHaveLength(0);
  });

  it("answers the Anthropic SDK non-streaming with end_turn", async () => {
    const message = await gateway.anthropic.messages.create({ model: "local", max_tokens: 64, messages: [{ role: "user", content: "hello" }] });
    expect(message.content).toEqual([{ type: "text", text: TINY_LOCAL_ANSWER }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBe(TINY_LOCAL_ANSWER_TOKENS);
  });
});
