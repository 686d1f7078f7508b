import { describe, expect, it } from "vitest";
import { APP_KEY, postJson, readSseEvents, useMockedGateway } from "./support/gateway.ts";

// Claude's extended thinking through tollgate, as the Anthropic SDK uses it: the request's
// `thinking` reaches Claude as sent, thinking blocks come back signed (whole, or streamed as
// thinking_delta then signature_delta), and a later turn sends them back unchanged, as Claude
// requires for a tool-use turn. Other targets drop `thinking` with a warning.

const rig = useMockedGateway({
  "capped-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { maxTokens: { cap: 3000 } } },
  "tight-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { maxTokens: { cap: 1024 } } },
  "tuned-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }], policies: { sampling: { temperature: { default: 0.2 }, topK: { default: 40 } } } },
});

const THINKING = { type: "enabled" as const, budget_tokens: 2048 };
const question = [{ role: "user" as const, content: "What is two plus two?" }];

describe("extended thinking, Anthropic client to Claude", () => {
  it("passes `thinking` on, and answers with the signed thinking block before the text, billed as output", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "4", thinking: "Two and two make four.", signature: "sig-EuYBCkQ", usage: { input_tokens: 50, output_tokens: 120 } });
    const { data, response } = await rig.gateway.anthropic.messages.create({ model: "claude", max_tokens: 4096, thinking: THINKING, messages: question }).withResponse();

    expect(rig.mocks.anthropic.requests[0]!.body.thinking).toEqual(THINKING);
    expect(data.content).toEqual([
      { type: "thinking", thinking: "Two and two make four.", signature: "sig-EuYBCkQ" },
      { type: "text", text: "4" },
    ]);
    // claude-sonnet-4-6: 50 × $3/M + 120 × $15/M (thinking is output) = 150,000 + 1,800,000 nano-dollars.
    expect(response.headers.get("x-tollgate-cost-usd")).toBe("0.00195");
    expect(response.headers.get("x-tollgate-output-tokens")).toBe("120");
  });

  it("streams the thinking block as thinking_delta events closed by its signature, which the SDK assembles", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", chunks: ["Four", "."], thinking: "Two and two make four.", signature: "sig-stream" });
    const stream = rig.gateway.anthropic.messages.stream({ model: "claude", max_tokens: 4096, thinking: THINKING, messages: question });
    const thinkingDeltas: string[] = [];
    stream.on("thinking", (delta) => thinkingDeltas.push(delta));
    const message = await stream.finalMessage();
    expect(thinkingDeltas.join("")).toBe("Two and two make four.");
    expect(message.content).toEqual([
      { type: "thinking", thinking: "Two and two make four.", signature: "sig-stream" },
      { type: "text", text: "Four." },
    ]);
  });

  it("streams thinking that is not displayed as a block with its signature alone", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "4", thinking: "", signature: "sig-hidden", redactedThinking: "EncryptedBlob==" });
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 4096, stream: true, thinking: { type: "adaptive", display: "omitted" }, messages: question });
    const events = (await readSseEvents(response)).filter((event) => event.event?.startsWith("content_block")).map((event) => JSON.parse(event.data));
    expect(events.slice(0, 5)).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "EncryptedBlob==" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "signature_delta", signature: "sig-hidden" } },
      { type: "content_block_stop", index: 1 },
    ]);
    expect(events[5]).toMatchObject({ type: "content_block_start", index: 2, content_block: { type: "text" } });
  });

  it("sends a tool-use turn's thinking back to Claude exactly as it came, redacted blocks too", async () => {
    const assistantTurn = {
      role: "assistant" as const,
      content: [
        { type: "redacted_thinking" as const, data: "EncryptedBlob==" },
        { type: "thinking" as const, thinking: "I should look up the weather.", signature: "sig-turn1" },
        { type: "tool_use" as const, id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
      ],
    };
    await rig.gateway.anthropic.messages.create({
      model: "claude",
      max_tokens: 4096,
      thinking: THINKING,
      tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        assistantTurn,
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "Rain, 14 °C" }] },
      ],
    });
    expect(rig.mocks.anthropic.requests[0]!.body.messages[1]).toEqual(assistantTurn);
  });

  it("refuses a thinking block sent back without its signature, naming the field", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", {
      model: "claude",
      max_tokens: 4096,
      messages: [...question, { role: "assistant", content: [{ type: "thinking", thinking: "hmm" }] }, { role: "user", content: "and?" }],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toBe("messages[1].content[0].signature: required: send the thinking block back with the signature it came with");
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});

describe("route policies keep a thinking request one Claude takes", () => {
  const ask = (route: string, body: Record<string, unknown>) => postJson(rig.gateway, "/v1/messages", { model: route, messages: question, ...body });

  it("a cap that lowers max_tokens lowers the budget in proportion, so the answer keeps its share, and says so", async () => {
    // 4096 of 8000 thinking, held to 3000: 4096 × 3000 / 8000 = 1536 thinking, 1464 to answer in.
    // Was: 2999 thinking and 1 token for the answer.
    const response = await ask("capped-claude", { max_tokens: 8000, thinking: { type: "enabled", budget_tokens: 4096 } });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests[0]!.body).toMatchObject({ max_tokens: 3000, thinking: { type: "enabled", budget_tokens: 1536 } });
    expect(response.headers.get("x-tollgate-policies")).toContain("thinking.budget_tokens=scaled:4096->1536");
  });

  it("a budget scaled under Claude's least is raised to it where max_tokens leaves room", async () => {
    // 2000 of 8000, held to 3000: 750 in proportion, below Claude's least of 1024.
    const response = await ask("capped-claude", { max_tokens: 8000, thinking: { type: "enabled", budget_tokens: 2000 } });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests[0]!.body).toMatchObject({ max_tokens: 3000, thinking: { type: "enabled", budget_tokens: 1024 } });
  });

  it("a cap under Claude's least budget is a 400 that says what to do, and calls nobody", async () => {
    const response = await ask("tight-claude", { max_tokens: 4096, thinking: THINKING });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toBe(
      'thinking needs max_tokens above its budget of at least 1024 tokens, and route "tight-claude" holds claude-sonnet-4-6\'s max_tokens to 1024: send the request without thinking, or have the route\'s cap raised',
    );
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it("a client's own budget at or above its max_tokens is a 400 naming the field", async () => {
    const response = await ask("claude", { max_tokens: 2048, thinking: THINKING });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe("thinking.budget_tokens 2048 must be below max_tokens 2048: lower budget_tokens or raise max_tokens");
  });

  it("a route's temperature and top_k defaults are not sent while Claude thinks, which it refuses", async () => {
    const response = await ask("tuned-claude", { max_tokens: 4096, thinking: THINKING });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests[0]!.body;
    expect(sent).not.toHaveProperty("temperature");
    expect(sent).not.toHaveProperty("top_k");
    expect(response.headers.get("x-tollgate-policies")).toMatch(/temperature=dropped.*top_k=dropped/);
    // Without thinking, the same route's defaults go as configured.
    await ask("tuned-claude", { max_tokens: 4096 });
    expect(rig.mocks.anthropic.requests[1]!.body).toMatchObject({ temperature: 0.2, top_k: 40 });
  });

  it("refuses a thinking block in a user turn, where Claude never wrote one", async () => {
    const response = await ask("claude", { max_tokens: 100, messages: [{ role: "user", content: [{ type: "thinking", thinking: "hmm", signature: "sig" }, { type: "text", text: "hi" }] }] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/belongs in the assistant turn/);
  });
});

describe("thinking where Claude is not the target, or the client is not Anthropic's", () => {
  it("an OpenAI target gets the request without `thinking`, and the answer says so", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", { model: "gpt", max_tokens: 4096, thinking: THINKING, messages: question });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-policies")).toContain("thinking=dropped");
    expect(rig.mocks.openai.requests[0]!.body).not.toHaveProperty("thinking");
  });

  it("an OpenAI client of a Claude that thinks gets the answer as its content and the thinking as reasoning_content", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "4", thinking: "Two and two make four." });
    const response = await fetch(`${rig.gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "claude", messages: question }),
    });
    const body = (await response.json()) as { choices: { message: { content: string; reasoning_content?: string } }[] };
    expect(body.choices[0]!.message).toMatchObject({ content: "4", reasoning_content: "Two and two make four." });
  });
});

// How much of output_tokens was thinking: Claude's usage.output_tokens_details (the SDK's
// OutputTokensDetails), and an OpenAI model's reasoning_tokens, which mean the same. Was: dropped
// by the Anthropic renderer, so apps that watch their reasoning spend read undefined.
describe("usage.output_tokens_details", () => {
  const thought = { input_tokens: 50, output_tokens: 900, output_tokens_details: { thinking_tokens: 750 } };

  it("reaches a Message from Claude, and a streamed one's final usage", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "4", thinking: "Two and two make four.", usage: thought });
    const message = await rig.gateway.anthropic.messages.create({ model: "claude", max_tokens: 4096, thinking: THINKING, messages: question });
    expect(message.usage).toMatchObject({ output_tokens: 900, output_tokens_details: { thinking_tokens: 750 } });

    rig.mocks.anthropic.enqueue({ kind: "text", text: "4", thinking: "Two and two make four.", usage: thought });
    const streamed = await rig.gateway.anthropic.messages.stream({ model: "claude", max_tokens: 4096, thinking: THINKING, messages: question }).finalMessage();
    expect(streamed.usage).toMatchObject({ output_tokens: 900, output_tokens_details: { thinking_tokens: 750 } });
  });

  it("carries an OpenAI model's reasoning_tokens, and is null for an answer that did not think", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "4", usage: { prompt_tokens: 20, completion_tokens: 300, reasoning_tokens: 256 } });
    const reasoned = await rig.gateway.anthropic.messages.create({ model: "gpt", max_tokens: 4096, messages: question });
    expect(reasoned.usage).toMatchObject({ output_tokens: 300, output_tokens_details: { thinking_tokens: 256 } });

    rig.mocks.anthropic.enqueue({ kind: "text", text: "4", usage: { input_tokens: 50, output_tokens: 1 } });
    const plain = await rig.gateway.anthropic.messages.create({ model: "claude", max_tokens: 4096, messages: question });
    expect(plain.usage.output_tokens_details).toBeNull();
  });
});
