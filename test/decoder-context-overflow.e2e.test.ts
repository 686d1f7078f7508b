// SGLang's refusal of a prompt longer than its context, over HTTP (400) and inside a 200 stream
// (versions that send it as the stream's first event), reaches the client as a 400 with
// `context_length_exceeded`, on which agents trim their history. Its words, "The input (N tokens)
// is longer than the model's context length (M tokens).", were not recognised, and the streamed
// form (type BadRequestError, code 400) became a 502.
// Wire: sglang tokenizer_manager.py _validate_one_request; serving_base.py create_error_response.
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { useDecoderRig } from "./support/decoder-rig.ts";

const rig = useDecoderRig();
const refusal = { object: "error", message: "The input (5000 tokens) is longer than the model's context length (4096 tokens).", type: "BadRequestError", param: null, code: 400 };

async function refusedWith(stream: boolean): Promise<{ status: number | undefined; code: unknown }> {
  try {
    if (stream) {
      const s = await rig.gateway.openai.chat.completions.create({ model: "local", stream: true, messages: [{ role: "user", content: "a very long prompt" }] });
      for await (const _ of s) void _;
    } else {
      await rig.gateway.openai.chat.completions.create({ model: "local", messages: [{ role: "user", content: "a very long prompt" }] });
    }
    return { status: 200, code: undefined };
  } catch (error) {
    const e = error as InstanceType<typeof OpenAI.APIError>;
    return { status: e.status, code: e.code };
  }
}

describe("SGLang refuses a prompt longer than its context", () => {
  it("its HTTP 400 reaches the client as 400 context_length_exceeded", async () => {
    rig.decoder.handle = (_body, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify(refusal));
    };
    expect(await refusedWith(false)).toEqual({ status: 400, code: "context_length_exceeded" });
  });

  it("the same refusal inside a 200 stream (before any token) reaches the client as 400 context_length_exceeded", async () => {
    rig.decoder.handle = (_body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ error: refusal })}\n\n`);
      res.end("data: [DONE]\n\n");
    };
    expect(await refusedWith(true)).toEqual({ status: 400, code: "context_length_exceeded" });
  });
});
