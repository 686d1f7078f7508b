// A compressed request body is refused with 415 naming Content-Encoding.
// Used to be wrong:
//   read-json-body.ts ignores Content-Encoding: a gzip body is decoded as UTF-8 and answered
//   400 "the request body is not valid JSON: Unexpected token '\u001f', "\u001f\ufffd\b…" — the
//   compressed bytes quoted back, nothing about the encoding. Either decompress it or answer 415
//   naming Content-Encoding.
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, expect, it } from "vitest";
import { APP_KEY, startRig, type Rig } from "./support/decoder-rig.ts";

let rig: Rig;
beforeAll(async () => (rig = await startRig()));
afterAll(() => rig.close());

it("a gzip body is read, or refused with a message naming Content-Encoding", async () => {
  const response = await fetch(`${rig.gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json", "content-encoding": "gzip" },
    body: gzipSync(JSON.stringify({ model: "local", messages: [{ role: "user", content: "hi" }] })),
  });
  const body = (await response.json()) as { error?: { message: string } };
  if (response.status === 200) return;
  expect(response.status).toBe(415);
  expect(body.error?.message).toMatch(/content-encoding/i);
});
