import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Tools Anthropic defines and the app runs: the text editor, bash, memory, computer use
// (platform.claude.com/docs/en/agents-and-tools/tool-use/tool-reference lists them as client
// tools). They come as a versioned type with no input_schema: Claude knows their schema. Coding
// agents send them on every turn. Was: refused as if they were server tools (web_search), so such
// an agent could not use tollgate at all.

const rig = useMockedGateway({
  "claude-sonnet-4": { targets: [{ provider: "anthropic", model: "claude-sonnet-4" }] },
  capped: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], maxCostPerRequestUsd: 0.000001 },
});
const editor = { type: "text_editor_20250728" as const, name: "str_replace_based_edit_tool" as const, max_characters: 10_000 };
const ask = (model: string, tools: unknown[]) => postJson(rig.gateway, "/v1/messages", { model, max_tokens: 100, tools, messages: [{ role: "user", content: "Fix the typo in README.md" }] });

describe("Anthropic's client tools", () => {
  it.each([
    [editor],
    [{ type: "bash_20250124", name: "bash" }],
    [{ type: "memory_20250818", name: "memory" }],
    [{ type: "computer_20250124", name: "computer", display_width_px: 1024, display_height_px: 768 }],
  ])("reach Claude as sent: %o", async (tool) => {
    const response = await ask("claude", [tool]);
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools).toEqual([tool]);
  });

  // The SDK's Tool has fields only Claude reads: eager_input_streaming (fine-grained tool
  // streaming: "set eager_input_streaming to true on any user-defined tool") and input_examples.
  // Was: a custom tool was rebuilt from its name, description and schema, and they were lost.
  it("a custom tool's fields that only Claude reads reach Claude, and not an OpenAI model", async () => {
    const tool = { name: "write_file", input_schema: { type: "object", properties: { path: { type: "string" } } }, eager_input_streaming: true, input_examples: [{ path: "a.txt" }] };
    expect((await ask("claude", [tool])).status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools).toEqual([tool]);
    expect((await ask("gpt", [tool])).status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.tools).toEqual([{ type: "function", function: { name: "write_file", parameters: tool.input_schema } }]);
  });

  it("keep strict only for models with structured outputs, as a custom tool does", async () => {
    const bash = { type: "bash_20250124", name: "bash", strict: true };
    expect((await ask("claude", [bash])).status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools).toEqual([bash]);
    expect((await ask("claude-sonnet-4", [bash])).status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools).toEqual([{ type: "bash_20250124", name: "bash" }]);
  });

  it("keep the client's cache breakpoint, beside a custom tool", async () => {
    const custom = { name: "run_tests", description: "Run the test suite", input_schema: { type: "object", properties: {} } };
    const response = await ask("claude", [custom, { ...editor, cache_control: { type: "ephemeral" } }]);
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools).toEqual([custom, { ...editor, cache_control: { type: "ephemeral", ttl: "5m" } }]);
  });

  it("carry a whole agent turn with the SDK: the editor's tool_use out, its tool_result back", async () => {
    rig.mocks.anthropic.enqueue({ kind: "tool-use", blocks: [{ id: "toolu_01A", name: "str_replace_based_edit_tool", input: { command: "view", path: "README.md" } }] });
    const messages: { role: "user" | "assistant"; content: unknown }[] = [{ role: "user", content: "Fix the typo in README.md" }];
    const first = await rig.gateway.anthropic.messages.create({ model: "claude", max_tokens: 100, tools: [editor], messages: messages as never });
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content.find((block) => block.type === "tool_use")).toMatchObject({ name: "str_replace_based_edit_tool", input: { command: "view", path: "README.md" } });
    messages.push({ role: "assistant", content: first.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: "# tollgate\nA gatway." }] });
    const second = await rig.gateway.anthropic.messages.create({ model: "claude", max_tokens: 100, tools: [editor], messages: messages as never });
    expect(second.stop_reason).toBe("end_turn");
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools).toEqual([editor]);
  });

  it("pass over an OpenAI target on a route that has a Claude one after it", async () => {
    const response = await ask("gpt-then-claude", [editor]);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-provider")).toBe("anthropic");
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("are a 400 naming the tool on a route with no Claude target, before any provider is called", async () => {
    const response = await ask("gpt", [{ name: "run_tests", input_schema: { type: "object" } }, editor]);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("tools[1]: text_editor_20250728 is a tool Anthropic defines, which only Claude models take");
    expect(body.error.message).toContain("route this request to a Claude model");
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("leave server tools refused as before, and a custom tool still needs its input_schema", async () => {
    const server = await ask("claude", [{ type: "web_search_20250305", name: "web_search" }]);
    expect(server.status).toBe(400);
    expect((await server.json()).error.message).toContain("server tools (web_search, code_execution, …) are not carried");
    const bare = await ask("claude", [{ name: "run_tests" }]);
    expect(bare.status).toBe(400);
    expect((await bare.json()).error.message).toMatch(/^tools\[0\]\.input_schema: required: the JSON Schema of the tool's input/);
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  // Claude expands each of these into its schema (Anthropic's tool pages: the text editor adds 700
  // input tokens, computer use 735 and a system prompt of up to 499): a budget's worst case must
  // count that, not the few bytes of {type, name}. Was: 644 tokens for the editor, under its 700.
  it("weigh in a budget's worst case at what Claude expands them to", async () => {
    const worstCase = async (tools: unknown[]) => {
      const response = await ask("capped", tools);
      expect(response.status).toBe(400);
      return Math.round(Number(/could cost up to \$([0-9.]+),/.exec((await response.json()).error.message)![1]) * 1e9);
    };
    const without = await worstCase([{ name: "run_tests", input_schema: { type: "object" } }]);
    const withEditor = await worstCase([{ name: "run_tests", input_schema: { type: "object" } }, editor]);
    // claude-sonnet-4-6 input: $3 per 1M tokens, reserved at its 1.1× US price = 3,300 nano-dollars per token.
    expect(withEditor - without).toBeGreaterThanOrEqual(2000 * 3300);
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});
