import { describe, expect, it } from "vitest";
import { boundedFetch } from "./bounded-fetch.ts";
import { BODY_BOUNDED, BodyTooLongError } from "./body-bound.ts";

const BOUNDS = { event: 10, answer: 20, errorBody: 8 };

/** A fetch answering `body` with `status` and `contentType`; `cancelled` says whether its body was cancelled. */
function upstream(body: string, contentType: string, status = 200) {
  const state = { cancelled: false };
  const fetchFn = async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const part of body.match(/.{1,4}/gs) ?? []) controller.enqueue(new TextEncoder().encode(part));
          controller.close();
        },
        cancel: () => void (state.cancelled = true),
      }),
      { status, headers: { "content-type": contentType } },
    );
  return { fetch: boundedFetch(fetchFn as typeof fetch, "openai", BOUNDS), state };
}

describe("boundedFetch", () => {
  it("bounds a streamed body's events", async () => {
    const { fetch } = upstream("data: xxxxxxxxxxxx", "text/event-stream");
    await expect((await fetch("http://upstream/")).text()).rejects.toThrow('provider "openai" sent a stream event longer than 10 bytes');
  });

  it("passes a JSON answer within its bound whole, and fails one past it, cancelling the upstream body", async () => {
    expect(await (await upstream(`{"text":"${"x".repeat(8)}"}`, "application/json").fetch("http://upstream/")).json()).toEqual({ text: "xxxxxxxx" });
    const past = upstream(`{"text":"${"x".repeat(100)}"}`, "application/json");
    await expect((await past.fetch("http://upstream/")).json()).rejects.toBeInstanceOf(BodyTooLongError);
    expect(past.state.cancelled).toBe(true);
  });

  it("keeps a refusal's start, the rest not read", async () => {
    const refusal = upstream("Bad Gateway, and then a very long page", "text/html", 502);
    const response = await refusal.fetch("http://upstream/");
    expect(response.status).toBe(502);
    expect(await response.text()).toBe("Bad Gate");
    expect(refusal.state.cancelled).toBe(true);
  });

  it("leaves a response its transport read whole within the bounds as it is", async () => {
    const read = Object.assign(new Response(`{"text":"${"x".repeat(100)}"}`, { headers: { "content-type": "application/json" } }), { [BODY_BOUNDED]: true });
    const response = await boundedFetch(async () => read, "openai", BOUNDS)("http://upstream/");
    expect(response).toBe(read);
  });
});
