import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { useMockedGateway, waitForRecord } from "./support/gateway.ts";

// Fields of OpenAI's answer that an openai-SDK app reads, streamed and not, as OpenAI sent them.

const rig = useMockedGateway();
const URL = "https://api.openai.com/v1/chat/completions";
const hi = [{ role: "user" as const, content: "hi" }];
// An hour back: a clock the gateway's own could not be mistaken for.
const CREATED = Math.floor(Date.now() / 1000) - 3600;
const identity = { id: "chatcmpl-abc123", created: CREATED, model: "gpt-4o-2024-08-06", service_tier: "default", system_fingerprint: "fp_0123456789" };
const usage = {
  prompt_tokens: 10,
  completion_tokens: 5,
  total_tokens: 15,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

function answerOnce(message: Record<string, unknown>, answerUsage: object = usage) {
  rig.mocks.server.use(
    http.post(URL, () =>
      HttpResponse.json({
        ...identity,
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", refusal: null, annotations: [], ...message }, logprobs: null, finish_reason: "stop" }],
        usage: answerUsage,
      }),
      { once: true },
    ),
  );
}

function streamOnce(deltas: Record<string, unknown>[], answerUsage: object = usage) {
  const base = { ...identity, object: "chat.completion.chunk" };
  const frames = [
    ...deltas.map((delta) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], usage: null, obfuscation: "abc" })),
    { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }], usage: null, obfuscation: "x" },
    { ...base, choices: [], usage: answerUsage, obfuscation: "yz" },
  ];
  const body = frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`).join("") + "data: [DONE]\n\n";
  rig.mocks.server.use(http.post(URL, () => new HttpResponse(body, { headers: { "content-type": "text/event-stream" } }), { once: true }));
}

describe("created", () => {
  // Was: the gateway's clock at the time it answered.
  it("is OpenAI's, on an answer and on every chunk of a stream (the usage chunk included)", async () => {
    answerOnce({ content: "hi" });
    const completion = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi });
    expect(completion.created).toBe(CREATED);

    streamOnce([{ role: "assistant", content: "", refusal: null }, { content: "hi" }]);
    const stream = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, stream: true, stream_options: { include_usage: true } });
    const seen = new Set<number>();
    for await (const chunk of stream) seen.add(chunk.created);
    expect([...seen]).toEqual([CREATED]);
  });

  it("is the gateway's clock for a Claude answer, which has none", async () => {
    const before = Math.floor(Date.now() / 1000);
    const completion = await rig.gateway.openai.chat.completions.create({ model: "claude", messages: hi });
    expect(completion.created).toBeGreaterThanOrEqual(before);
  });
});

describe("usage details", () => {
  // Predicted Outputs: how much of the prediction the answer kept, which an app tunes its
  // predictions by. Was: only cached_tokens and reasoning_tokens came back.
  const predicted = {
    ...usage,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 2 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 1, accepted_prediction_tokens: 18, rejected_prediction_tokens: 7 },
  };
  const prediction = { type: "content" as const, content: "export const x = 1;\n" };

  it("reach the app as OpenAI sent them, not streamed and streamed", async () => {
    answerOnce({ content: "export const x = 2;\n" }, predicted);
    const completion = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, prediction });
    expect(completion.usage).toEqual(predicted);

    streamOnce([{ role: "assistant", content: "", refusal: null }, { content: "export const x = 2;\n" }], predicted);
    const stream = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, prediction, stream: true, stream_options: { include_usage: true } });
    let streamed: unknown;
    for await (const chunk of stream) if (chunk.usage) streamed = chunk.usage;
    expect(streamed).toEqual(predicted);
  });

  it("do not change what the answer costs", async () => {
    answerOnce({ content: "export const x = 2;\n" }, predicted);
    const { data, response } = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, prediction }).withResponse();
    expect(data.usage?.completion_tokens_details).toMatchObject({ accepted_prediction_tokens: 18 });
    answerOnce({ content: "export const x = 2;\n" });
    const { response: plain } = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, prediction }).withResponse();
    expect(response.headers.get("x-tollgate-cost-usd")).toBe(plain.headers.get("x-tollgate-cost-usd"));
  });
});

describe("annotations", () => {
  // gpt-4o-search-preview and -mini search on every request and cite their sources as
  // url_citation annotations of the answer's text. Was: dropped, streamed and not.
  const citation = { type: "url_citation", url_citation: { start_index: 0, end_index: 21, title: "Paris - Wikipedia", url: "https://en.wikipedia.org/wiki/Paris" } };
  const answer = "Paris is the capital.";
  const ask = { model: "gpt", messages: [{ role: "user" as const, content: "Capital of France?" }] };

  it("reach an OpenAI client as OpenAI sent them", async () => {
    answerOnce({ content: answer, annotations: [citation] });
    const completion = await rig.gateway.openai.chat.completions.create(ask);
    expect(completion.choices[0]!.message).toMatchObject({ content: answer, annotations: [citation] });
  });

  it("streamed, reach it in a delta of their own, which the SDK's stream helper puts on the final message", async () => {
    const deltas = [{ role: "assistant", content: "", refusal: null }, { content: answer }, { annotations: [citation] }];
    streamOnce(deltas);
    const final = await rig.gateway.openai.chat.completions.stream(ask).finalChatCompletion();
    expect(final.choices[0]!.message).toMatchObject({ content: answer, annotations: [citation] });

    streamOnce(deltas);
    const stream = await rig.gateway.openai.chat.completions.create({ ...ask, stream: true });
    const seen: unknown[] = [];
    for await (const chunk of stream) {
      const annotations = (chunk.choices[0]?.delta as { annotations?: unknown[] } | undefined)?.annotations;
      if (annotations) seen.push(...annotations);
    }
    expect(seen).toEqual([citation]);
  });

  it("are dropped for an Anthropic client, whose answer has no place for them, and the record says so", async () => {
    answerOnce({ content: answer, annotations: [citation] });
    const { data: message, response } = await rig.gateway.anthropic.messages.create({ model: "gpt", max_tokens: 100, messages: ask.messages }).withResponse();
    expect(message.content).toEqual([{ type: "text", text: answer }]);
    expect(response.headers.get("x-tollgate-policies")).toContain("annotations=dropped");
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.warnings.join("\n")).toContain("OpenAI's url citations) were not passed on");

    streamOnce([{ role: "assistant", content: "", refusal: null }, { content: answer }, { annotations: [citation] }]);
    const stream = rig.gateway.anthropic.messages.stream({ model: "gpt", max_tokens: 100, messages: ask.messages });
    const streamedMessage = await stream.finalMessage();
    expect(streamedMessage.content).toHaveLength(1);
    expect(streamedMessage.content[0]).toMatchObject({ type: "text", text: answer });
    const { response: streamed } = await stream.withResponse();
    const streamedRecord = await waitForRecord(rig.gateway, streamed.headers.get("x-tollgate-request-id")!);
    expect(streamedRecord.policies).toContain("annotations=dropped");
  });
});
