import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Messages request fields of the Anthropic SDK (MessageCreateParamsBase) that tollgate's schema
// used to strip without a word: the request succeeded and the app could not tell.
//   - `cache_control` at the top level (automatic caching: Anthropic marks the last cacheable
//     block). Dropped, nothing was cached and every call paid full input price.
//   - `service_tier` ("standard_only" keeps a request off priority capacity).
//   - `speed`: "fast" is billed above the rates tollgate prices with, so it is refused, not
//     carried at a price the invoice will not match. (`inference_geo`: anthropic-inference-geo.e2e.test.ts.)

const rig = useMockedGateway({ "claude-cached": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { promptCache: { mode: "auto" } } } });
const ask = (model: string, fields: Record<string, unknown>) =>
  postJson(rig.gateway, "/v1/messages", { model, max_tokens: 50, system: "You answer briefly.", messages: [{ role: "user", content: "Hello?" }], ...fields });
const sentToClaude = () => rig.mocks.anthropic.requests.at(-1)!.body as Record<string, unknown>;

describe("top-level cache_control (automatic prompt caching)", () => {
  it("reaches Claude as sent, and the route's prompt-cache policy places no breakpoint of its own beside it", async () => {
    const response = await ask("claude-cached", { cache_control: { type: "ephemeral", ttl: "1h" } });
    expect(response.status).toBe(200);
    expect(sentToClaude().cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(JSON.stringify(sentToClaude().system)).not.toContain("cache_control");
    expect(JSON.stringify(sentToClaude().messages)).not.toContain("cache_control");
  });

  it("reaches count_tokens too, with the structured-output schema the chat would send", async () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
    const response = await postJson(rig.gateway, "/v1/messages/count_tokens", {
      model: "claude",
      messages: [{ role: "user", content: "Hello?" }],
      cache_control: { type: "ephemeral" },
      output_config: { format: { type: "json_schema", schema } },
    });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!;
    expect(sent.url).toContain("/v1/messages/count_tokens");
    expect(sent.body).toMatchObject({ cache_control: { type: "ephemeral", ttl: "5m" }, output_config: { format: { type: "json_schema", schema } } });
  });

  it("is not sent to an OpenAI model, which caches on its own", async () => {
    const response = await ask("gpt", { cache_control: { type: "ephemeral" } });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body).not.toHaveProperty("cache_control");
  });
});

describe("service_tier, inference_geo and speed", () => {
  it('reach Claude where they cost what tollgate prices: "standard_only", "global"; speed "standard", the default, is accepted and not sent', async () => {
    const response = await ask("claude", { service_tier: "standard_only", inference_geo: "global", speed: "standard" });
    expect(response.status).toBe(200);
    expect(sentToClaude()).toMatchObject({ service_tier: "standard_only", inference_geo: "global" });
    expect(sentToClaude()).not.toHaveProperty("speed");
  });

  it.each([["speed", "fast", 'fast mode costs more: remove speed, or write "standard"']])("%s %o is a 400 saying why and what to write, before Claude is called", async (field, value, message) => {
    const response = await ask("claude", { [field]: value });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toContain(`${field}: `);
    expect(body.error.message).toContain(message);
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});

describe("tool_choice on a turn without tools", () => {
  // An agent loop sends its tool_choice every turn, also on a turn that offers no tools. OpenAI
  // refuses tool_choice without tools ("'tool_choice' is only allowed when 'tools' are specified"),
  // and vLLM does too; it means nothing there, so it is not sent.
  it("is not sent to an OpenAI target", async () => {
    const response = await ask("gpt", { tool_choice: { type: "auto" } });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body).not.toHaveProperty("tool_choice");
  });
});

describe("fields tollgate does not carry", () => {
  // Anthropic refuses a field it does not know with a 400 ("Extra inputs are not permitted"). The
  // schema stripped them instead: a request asking for server-side fallback, or to run in a
  // code-execution container, was answered 200 as if it had not asked.
  const refusedBeforeClaude = async (fields: Record<string, unknown>, param: string, says: string) => {
    const response = await ask("claude", fields);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toContain(`${param}: `);
    expect(body.error.message).toContain(says);
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  };

  it.each([
    ["fallbacks", { fallbacks: ["claude-opus-4-6"] }, "fallbacks", "a tollgate route's targets are its fallbacks"],
    ["fallbacks", { fallbacks: "default" }, "fallbacks", "a tollgate route's targets are its fallbacks"],
    ["fallback_credit_token", { fallback_credit_token: "fct_01" }, "fallback_credit_token", "remove fallback_credit_token"],
    ["container", { container: "container_011CZ" }, "container", "does not carry Claude's server tools"],
    ["billing_policy", { billing_policy: { type: "billing_policy", bill_to: "user_profile" } }, "billing_policy.bill_to", "cannot bill a user profile"],
    ["an unknown field", { frobnicate: true }, "frobnicate", "tollgate does not carry this field; remove it"],
    // output_config is strict too: its task_budget (a beta) paces Claude, and was stripped.
    ["output_config.task_budget", { output_config: { task_budget: { type: "tokens", total: 50_000 } } }, "output_config.task_budget", "tollgate does not carry a task budget"],
    ["an unknown output_config field", { output_config: { frobnicate: 1 } }, "output_config.frobnicate", "tollgate does not carry this field; remove it"],
  ])("%s is a 400 naming it and saying why, before Claude is called", async (_name, fields, param, says) => {
    await refusedBeforeClaude(fields, param, says);
  });

  it("the SDK's beta fallbacks is refused too", async () => {
    const call = rig.gateway.anthropic.beta.messages.create({ model: "claude", max_tokens: 50, messages: [{ role: "user", content: "Hello?" }], fallbacks: [{ model: "claude-opus-4-6" }] });
    await expect(call).rejects.toMatchObject({ status: 400, error: { error: { message: expect.stringContaining("fallbacks: ") } } });
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it("diagnostics, billing to self and null forms of the refused fields change nothing: accepted, and not sent", async () => {
    const response = await ask("claude", {
      diagnostics: { previous_message_id: "msg_01" },
      billing_policy: { type: "billing_policy", bill_to: "self" },
      fallbacks: null,
      fallback_credit_token: null,
      container: null,
      thread: null,
    });
    expect(response.status).toBe(200);
    for (const field of ["diagnostics", "billing_policy", "fallbacks", "fallback_credit_token", "container", "thread"]) expect(sentToClaude()).not.toHaveProperty(field);
  });
});
