// `Expect: 100-continue` with a body declared over the limit gets 413, not an invitation to upload it.
// Used to be wrong:
//   serve.ts uses @hono/node-server's default 'checkContinue' handling: Node answers
//   `100 Continue` to every `Expect: 100-continue` before the app sees the request, so a client
//   announcing a body over server.maxBodyBytes (curl does this for bodies over 1 MiB) is invited
//   to upload all of it, and only then learns it was 413 all along.
import { afterAll, beforeAll, expect, it } from "vitest";
import { APP_KEY, rawHttp, startRig, type Rig } from "./support/decoder-rig.ts";

let rig: Rig;
beforeAll(async () => (rig = await startRig()));
afterAll(() => rig.close());

it("a declared body over the limit is refused with 413 before `100 Continue` invites the upload", async () => {
  const { text } = await rawHttp(
    rig.gateway.port,
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${APP_KEY}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n`,
    1500,
  );
  expect(text.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
  expect(text).not.toContain("100 Continue");
});
