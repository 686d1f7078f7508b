// Another method on a served path is a 405 with `Allow`, in the path's dialect.
// Used to be wrong:
//   create-gateway.ts: a known endpoint asked with the wrong method (GET or PUT
//   /v1/chat/completions, DELETE /v1/messages) falls through to notFound: 404 "no such endpoint",
//   with no Allow header. RFC 9110 §15.5.6: 405 with `Allow`. A client or load-balancer probe that
//   GETs the chat path is told the path does not exist, and chases the baseURL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_KEY, startRig, type Rig } from "./support/decoder-rig.ts";

let rig: Rig;
beforeAll(async () => (rig = await startRig()));
afterAll(() => rig.close());

describe("a served path asked with another method", () => {
  it.each([
    ["GET", "/v1/chat/completions", "POST"],
    ["PUT", "/v1/chat/completions", "POST"],
    ["DELETE", "/v1/messages", "POST"],
    ["POST", "/healthz", "GET"],
  ])("%s %s answers 405 with Allow: %s, in the path's dialect", async (method, path, allow) => {
    const response = await fetch(`${rig.gateway.url}${path}`, { method, headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" }, body: method === "GET" ? undefined : "{}" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toContain(allow);
    expect(response.headers.get("x-tollgate-request-id")).toMatch(/^req_/);
    const body = await response.json();
    if (path.startsWith("/v1/messages")) expect(body).toMatchObject({ type: "error", error: { type: expect.any(String), message: expect.any(String) } });
    else expect(body).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
  });
});
