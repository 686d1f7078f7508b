import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { APP_KEY, LIMITED_KEY, useMockedGateway } from "./support/gateway.ts";

// What apps read through the official SDKs besides the answer itself. Both were missing:
// - the request id under the SDKs' own header names (OpenAI's `x-request-id`, Anthropic's
//   `request-id`): `_request_id` on answers and `requestID` on errors were null, where apps log
//   them for support; an Anthropic error body carries it too, as `request_id`;
// - `GET /v1/models/{id}` (`models.retrieve()`), which apps call at start-up to check a model.

const rig = useMockedGateway();

describe("request ids, as the SDKs read them", () => {
  it("OpenAI: on an answer, a stream and an error, equal to x-tollgate-request-id", async () => {
    const { data, response } = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] }).withResponse();
    const answered = (data as { _request_id?: string | null })._request_id;
    expect(answered).toMatch(/^req_/);
    expect(answered).toBe(response.headers.get("x-tollgate-request-id"));
    const { request_id: streamed } = await rig.gateway.openai.chat.completions.create({ model: "gpt", stream: true, messages: [{ role: "user", content: "hi" }] }).withResponse();
    expect(streamed).toMatch(/^req_/);
    const failure = (await rig.gateway.openai.chat.completions.create({ model: "no-such-route", messages: [{ role: "user", content: "hi" }] }).catch((error: unknown) => error)) as InstanceType<typeof OpenAI.APIError>;
    expect(failure.requestID).toMatch(/^req_/);
  });

  it("Anthropic: on an answer, a stream and an error (header and body)", async () => {
    const message = await rig.gateway.anthropic.messages.create({ model: "claude", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
    expect(message._request_id).toMatch(/^req_/);
    const stream = rig.gateway.anthropic.messages.stream({ model: "claude", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
    await stream.finalMessage();
    expect(stream.request_id).toMatch(/^req_/);
    const failure = (await rig.gateway.anthropic.messages.create({ model: "no-such-route", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }).catch((error: unknown) => error)) as InstanceType<typeof Anthropic.APIError>;
    expect(failure.requestID).toMatch(/^req_/);
    expect((failure.error as { request_id?: string }).request_id).toBe(failure.requestID);
  });
});

describe("models.retrieve()", () => {
  it("answers a route the key may use, in both SDKs' shapes", async () => {
    const model = await rig.gateway.openai.models.retrieve("gpt");
    expect(model).toMatchObject({ id: "gpt", object: "model", owned_by: "tollgate" });
    const claude = await rig.gateway.anthropic.models.retrieve("claude");
    expect(claude).toMatchObject({ id: "claude", type: "model", display_name: "claude" });
  });

  it("is a 405 that says GET for another method (the OpenAI SDK's models.delete)", async () => {
    const response = await fetch(`${rig.gateway.url}/v1/models/gpt`, { method: "DELETE", headers: { authorization: `Bearer ${APP_KEY}` } });
    expect([response.status, response.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
  });

  it("is a 404 for a route that does not exist or that the key may not use", async () => {
    const limited = new OpenAI({ baseURL: `${rig.gateway.url}/v1`, apiKey: LIMITED_KEY, maxRetries: 0 });
    const allowed = (await limited.models.list()).data.map((model) => model.id);
    const forbidden = (await rig.gateway.openai.models.list()).data.map((model) => model.id).find((id) => !allowed.includes(id))!;
    for (const [client, id] of [[rig.gateway.openai, "no-such-route"], [limited, forbidden]] as const) {
      const failure = (await client.models.retrieve(id).catch((error: unknown) => error)) as InstanceType<typeof OpenAI.APIError>;
      expect(failure.status).toBe(404);
      expect(failure.message).toContain(`no model "${id}" for this key`);
    }
  });
});
