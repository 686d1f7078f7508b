import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_KEY, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// Route names are free strings in the config, and a client names the route in `model`. The name
// is echoed in the `x-tollgate-route` response header, where Node refuses anything outside
// Latin-1: a route named "摘要" used to fail every answer after the provider was called (and
// billed). Header values are now percent-encoded where they must be.

let mocks: MockProviders;
let gateway: TestGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startTestGateway({ ...base, routes: { ...base.routes, "摘要": { targets: [{ provider: "openai", model: "gpt-4o" }] } } });
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});

const chat = (body: object) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

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
