// A provider that answers 200 with something that is not a chat completion is named as such, not as unreachable.
// Used to be wrong:
//   adapters/shared/map-provider-error.ts: any status-less error becomes "could not reach provider
//   X: …". A provider that WAS reached and answered 200 with HTML (a captive proxy, a misrouted
//   baseUrl), an empty body or JSON without `choices` is reported as unreachable, with a JSON
//   parser's or a TypeError's words ("Cannot read properties of undefined (reading '0')"): the
//   operator debugs the network instead of the baseUrl.
import { afterAll, beforeAll, afterEach, describe, expect, it } from "vitest";
import { APP_KEY, startRig, type Rig } from "./support/decoder-rig.ts";

let rig: Rig;
let defaultHandle: Rig["decoder"]["handle"];
beforeAll(async () => { rig = await startRig(); defaultHandle = rig.decoder.handle; });
afterEach(() => { rig.decoder.handle = defaultHandle; });
afterAll(() => rig.close());

const answers: [string, string, string][] = [
  ["an HTML page", "text/html", "<html><body>Sign in to the proxy</body></html>"],
  ["an empty body", "application/json", ""],
  ["JSON without choices", "application/json", "{}"],
];

describe.each(answers)("a provider that answers 200 with %s (not streamed)", (_what, contentType, text) => {
  it.each(["/v1/chat/completions", "/v1/messages"])("%s: 502 saying the provider's answer was not a chat completion, not that it could not be reached", async (path) => {
    rig.decoder.handle = (_body, res) => { res.writeHead(200, { "content-type": contentType }); res.end(text); };
    const response = await fetch(`${rig.gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "local", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(502);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).not.toMatch(/could not reach/);
    expect(body.error.message).not.toMatch(/Cannot read properties/);
  });
});
