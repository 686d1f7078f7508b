import { describe, expect, it } from "vitest";
import { APP_KEY, ledgerRecords, useMockedGateway } from "./support/gateway.ts";

// Deeply nested JSON in a request's free-form fields (an OpenAI tool's parameters, a response
// schema, an Anthropic tool_use block's input) is a 400 in the client's dialect naming the field,
// refused as the body is read, so it leaves no record or reservation behind.
// Was: the schema took any depth, then JSON.stringify on the request path overflowed the stack:
// a 500 "internal error" and a stack trace in the log per request.

const rig = useMockedGateway();

/** 20 000 nested arrays: 40 kB of text, inside the test config's 64 kB body limit. */
const DEEP = "[".repeat(20_000) + "]".repeat(20_000);

function postRaw(path: string, body: string) {
  return fetch(`${rig.gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body,
  });
}

describe("deeply nested JSON in a request", () => {
  it("in an OpenAI tool's parameters is a 400, not a 500", async () => {
    const response = await postRaw(
      "/v1/chat/completions",
      `{"model":"gpt","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"x":${DEEP}}}}]}`,
    );
    const body = await response.json();
    expect({ status: response.status, type: body.error?.type }).toEqual({ status: 400, type: "invalid_request_error" });
    expect(body.error).toMatchObject({
      param: "tools[0].function.parameters.x[0]…",
      message: "tools[0].function.parameters.x[0]… nests objects and arrays more than 128 levels deep; send that field with fewer levels",
    });
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("in an OpenAI response_format schema is a 400, not a 500", async () => {
    const response = await postRaw(
      "/v1/chat/completions",
      `{"model":"gpt","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"x":${DEEP}}}}}`,
    );
    const body = await response.json();
    expect({ status: response.status, type: body.error?.type }).toEqual({ status: 400, type: "invalid_request_error" });
    expect(body.error.param).toBe("response_format.json_schema.schema.x[0][0]…");
  });

  it("in an Anthropic tool_use block's input is a 400, not a 500", async () => {
    const response = await postRaw(
      "/v1/messages",
      `{"model":"claude","max_tokens":16,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{"x":${DEEP}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`,
    );
    const body = await response.json();
    expect({ status: response.status, type: body.error?.type }).toEqual({ status: 400, type: "invalid_request_error" });
    expect(body.error.message).toBe("messages[1].content[0].input.x… nests objects and arrays more than 128 levels deep; send that field with fewer levels");
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it("leaves no cost record (it is refused before admission)", async () => {
    await rig.gateway.ledger.flush();
    expect(await ledgerRecords(rig.gateway)).toEqual([]);
  });
});
