import { describe, expect, it } from "vitest";
import { OPENAI_KEY, postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// A provider's 4xx passes its `code` and `param` to the client (clients branch on them). A
// provider key is identifier-shaped too (sk-…): a provider, or a proxy in front of it, that
// echoes the key there must not hand it to every tenant, nor to the cost record's errorType.
// PRODUCT.md: "Provider keys never reach clients or logs."

const rig = useMockedGateway();

describe("a provider's error code echoing tollgate's provider key", () => {
  it("does not reach the client, nor the cost record", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 400, type: "invalid_request_error", code: OPENAI_KEY, message: `bad key ${OPENAI_KEY}` });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "hi" }] });
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(JSON.parse(text).error.message).not.toContain(OPENAI_KEY);
    expect(text).not.toContain(OPENAI_KEY);
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(JSON.stringify(record)).not.toContain(OPENAI_KEY);
  });
});
