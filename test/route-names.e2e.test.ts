import { describe, expect, it } from "vitest";
import { LIMITED_KEY, postJson, useMockedGateway } from "./support/gateway.ts";

// `model` names a route; an unknown route is a 404 (PRODUCT.md: "Unknown route: 404").
// findRoute() looked the name up with `config.routes[name]`, so names inherited from
// Object.prototype ("constructor", "toString", "__proto__", ...) were found as "routes".

const rig = useMockedGateway();

const post = (path: string, body: unknown, key?: string) => postJson(rig.gateway, path, body, key);

describe("a route name that is an Object.prototype property", () => {
  it.each(["constructor", "toString", "hasOwnProperty", "__proto__"])("model %s is an unknown route: 404 in the OpenAI dialect", async (model) => {
    const response = await post("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] });
    const body = await response.json();
    expect({ status: response.status, type: body.error?.type }).toEqual({ status: 404, type: "invalid_request_error" });
    expect(body.error.message).toContain(`unknown route`);
  });

  it("model constructor is an unknown route for a key limited to some routes too (404, not 403)", async () => {
    const response = await post("/v1/messages", { model: "constructor", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }, LIMITED_KEY);
    const body = await response.json();
    expect({ status: response.status, type: body.error?.type }).toEqual({ status: 404, type: "not_found_error" });
  });
});
