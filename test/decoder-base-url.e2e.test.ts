import { describe, expect, it } from "vitest";
import { useDecoderRig } from "./support/decoder-rig.ts";

// A local decoder's baseUrl without its /v1: the server answers its own "no such path" 404
// (FastAPI's {"detail":"Not Found"} from vLLM and SGLang, Go's "404 page not found" from Ollama).
// It was reported as "does not know the configured model", and a local-first route went on to
// the cloud for every request with nothing pointing at the URL. The message names the setting.

const rig = useDecoderRig();

describe("a decoder that has no Chat Completions endpoint at the configured baseUrl", () => {
  for (const [server, contentType, body] of [
    ["vLLM / SGLang", "application/json", JSON.stringify({ detail: "Not Found" })],
    ["Ollama", "text/plain", "404 page not found"],
  ] as const) {
    it(`says to check the baseUrl (${server})`, async () => {
      rig.decoder.handle = (_body, response) => {
        response.writeHead(404, { "content-type": contentType });
        response.end(body);
      };
      const failure = await rig.gateway.openai.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }] }).catch((error: Error) => error);
      expect((failure as Error).message).toMatch(/provider "local" has no Chat Completions endpoint at its baseUrl \(HTTP 404: .*\); check providers\.local\.baseUrl: OpenAI-compatible servers serve it under \/v1/);
    });
  }

  it("a 404 naming the model still says the model is unknown", async () => {
    rig.decoder.handle = (_body, response) => {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ object: "error", message: "The model `tiny` does not exist.", type: "NotFoundError", param: null, code: 404 }));
    };
    const failure = await rig.gateway.openai.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }] }).catch((error: Error) => error);
    expect((failure as Error).message).toContain('provider "local" does not know the configured model: The model `tiny` does not exist.');
  });
});
