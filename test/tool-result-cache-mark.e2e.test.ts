import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// The Messages API takes a client's cache_control on a block inside a tool_result's content (an
// agent marks the file it just read). The neutral model keeps a tool result as one text and its
// images, so the mark goes on the tool_result block itself: the same prefix, through the end of
// the result. Was: it was dropped, so the client's cache was never written or read (every turn
// billed the whole prefix at the full input price), and a promptCache route placed its own.

const rig = useMockedGateway({
  "claude-auto": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { promptCache: { mode: "always", ttl: "5m" } } },
});

const body = (model: string) => ({
  model,
  max_tokens: 100,
  system: "You are a helpful agent.",
  tools: [{ name: "read", input_schema: { type: "object", properties: {} } }],
  messages: [
    { role: "user", content: "read the file" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read", input: {} }] },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "file contents ".repeat(50), cache_control: { type: "ephemeral", ttl: "1h" } }] }],
    },
  ],
});

describe("a client's cache_control inside a tool_result", () => {
  it("reaches Anthropic, on the tool_result block, with its TTL", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", body("claude"));
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body as { messages: { content: { type: string; cache_control?: unknown }[] }[] };
    const marked = sent.messages.flatMap((message) => message.content.filter((block) => block.cache_control));
    expect(marked).toEqual([expect.objectContaining({ type: "tool_result", tool_use_id: "toolu_1", cache_control: { type: "ephemeral", ttl: "1h" } })]);
  });

  it("is the client's own breakpoint to the prompt-cache policy, which then adds none", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", body("claude-auto"));
    expect(response.status).toBe(200);
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.policies).toContain("prompt_cache=client");
    expect(JSON.stringify(rig.mocks.anthropic.requests.at(-1)!.body).match(/cache_control/g)).toHaveLength(1);
  });
});
