import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Route names are free strings in the config, and a client names the route in `model`. The name
// is echoed in the `x-tollgate-route` response header, where Node refuses anything outside
// Latin-1: a route named "摘要" used to fail every answer after the provider was called (and
// billed). Header values are now percent-encoded where they must be.

const rig = useMockedGateway({ "摘要": { targets: [{ provider: "openai", model: "gpt-4o" }] } });
const chat = (body: object) => postJson(rig.gateway, "/v1/chat/completions", body);

describe("a route whose name is not ASCII", () => {
  it("answers (not streamed)", async () => {
    const response = await chat({ model: "摘要", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-request-id")).toMatch(/^req_/);
    expect(response.headers.get("x-tollgate-route")).toBe("%E6%91%98%E8%A6%81");
    expect(decodeURIComponent(response.headers.get("x-tollgate-route")!)).toBe("摘要");
  });

  it("answers (streamed)", async () => {
    const response = await chat({ model: "摘要", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(response.headers.get("x-tollgate-route")).toBe("%E6%91%98%E8%A6%81");
    expect(await response.text()).toContain("data: [DONE]");
  });
});
