import { describe, expect, it } from "vitest";
import { postJson, waitForRecord } from "./support/gateway.ts";
import { chunk, completion, sendJson } from "./support/fake-decoder.ts";
import { useDecoderRig } from "./support/decoder-rig.ts";

// A vLLM stream its engine aborted (scale-down, shutdown, sleep, an abort request): HTTP 200, a
// last chunk with finish_reason "abort", the usage chunk and [DONE] (vllm-project/vllm#57082).
// The answer is cut short, so it reaches the client as an error in its dialect and is recorded
// as failed, never as a complete answer.
// Used to be wrong: "abort" was read as a normal finish (OpenAI "stop", Anthropic "end_turn").

const rig = useDecoderRig((base) => ({ ...base, routes: { ...base.routes, vllm: { targets: [{ provider: "local", model: "fake-model" }] } } }));

describe("a vLLM stream its engine aborted (finish_reason \"abort\")", () => {
  it("reaches the OpenAI client as an error, not as an answer that finished with \"stop\"", async () => {
    rig.decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(
        chunk("cmpl-1", { role: "assistant", content: "" }) +
          chunk("cmpl-1", { content: "The first half of a long ans" }) +
          chunk("cmpl-1", { content: "" }, "abort") +
          chunk("cmpl-1", null, null, { usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }) +
          "data: [DONE]\n\n",
      );
    };
    const { data: stream, response } = await rig.gateway.openai.chat.completions
      .create({ model: "vllm", messages: [{ role: "user", content: "write a long answer" }], stream: true })
      .withResponse();
    const finishReasons: string[] = [];
    let failure: unknown;
    try {
      for await (const part of stream) if (part.choices[0]?.finish_reason) finishReasons.push(part.choices[0].finish_reason);
    } catch (error) {
      failure = error;
    }
    expect(finishReasons).not.toContain("stop");
    expect(failure).toBeDefined();
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.status).not.toBe("ok");
  });

  it("reaches the Anthropic client as an error, not as stop_reason end_turn", async () => {
    rig.decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(
        chunk("cmpl-2", { role: "assistant", content: "" }) +
          chunk("cmpl-2", { content: "The first half" }) +
          chunk("cmpl-2", { content: "" }, "abort") +
          "data: [DONE]\n\n",
      );
    };
    const attempt = rig.gateway.anthropic.messages.stream({ model: "vllm", max_tokens: 256, messages: [{ role: "user", content: "write" }] }).finalMessage();
    await expect(attempt).rejects.toThrow();
  });

  it("not streamed: an error to the client, and the usage the engine reported is billed (it did the work)", async () => {
    rig.decoder.handle = (_body, response) =>
      sendJson(response, completion("cmpl-3", { content: "The first half of a long ans" }, "abort", { usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }));
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "vllm", messages: [{ role: "user", content: "write a long answer" }] });
    expect(response.status).toBe(502);
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.status).toBe("error");
    expect(record.usage).toMatchObject({ inputTokens: 12, outputTokens: 7 });
    // $2 a GPU hour at 5,000 prompt / 100 generated tokens a second (testConfig):
    //   12 × 2e18 / (5,000 × 3,600) = 1,333,333,333,333 atto → 1,333 nano
    //    7 × 2e18 / (100 × 3,600) = 38,888,888,888,889 atto → 38,889 nano
    // Was: the usage was dropped with the answer, and the call cost $0.
    expect(record.cost).toMatchObject({ inputNano: 1_333, outputNano: 38_889, totalNano: 40_222 });
  });
});
