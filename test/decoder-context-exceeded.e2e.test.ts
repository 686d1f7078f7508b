import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { useLlamaGateway } from "./support/llama-server.ts";

// A prompt longer than llama-server's context. The real server (build b11669) answers
//   400 {"error":{"code":400,"message":"request (4822 tokens) exceeds the available context size
//   (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4822,"n_ctx":512}}
// and an OpenAI client of the local route gets OpenAI's own 400 code for it,
// "context_length_exceeded", which clients branch on to trim their history (vLLM's "maximum
// context length" 400 is mapped the same way: adapters/shared/map-provider-error.test.ts).
// Used to be wrong: the client got code null, and nothing said the context was the cause.

const rig = await useLlamaGateway();

describe.skipIf(rig.skipped)("context length exceeded on a real llama-server", () => {
  const tooLong = "hello world ".repeat(400); // about 4,800 tokens for a 512-token slot

  it.each([false, true])("reaches the OpenAI client as 400 context_length_exceeded (stream: %s)", async (stream) => {
    const failure = await rig.gateway.openai.chat.completions
      .create({ model: "local", messages: [{ role: "user", content: tooLong }], max_tokens: 8, stream } as never)
      .then(async (answer: unknown) => {
        if (stream) for await (const _part of answer as AsyncIterable<unknown>) {
          // drain
        }
        return undefined;
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    const error = failure as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(400);
    expect(error.code).toBe("context_length_exceeded");
  });
});
