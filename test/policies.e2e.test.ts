import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { APP_KEY, readSseEvents, startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// Each policy through a running gateway: what the provider received (the msw handler's record of
// the request), what the client got, and what the cost record says.

let mocks: MockProviders;
let gateway: TestGateway;

const openaiTarget = [{ provider: "openai", model: "gpt-4o" }];
const claudeTarget = [{ provider: "anthropic", model: "claude-sonnet-4-6" }];

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startTestGateway({
    ...base,
    routes: {
      ...base.routes,
      capped: {
        targets: openaiTarget,
        policies: { maxTokens: { default: 512, cap: 1024, onExceed: "clamp" }, stop: { sequences: ["\n\nUser:"] }, brevity: { maxSentences: 3 } },
      },
      strict: { targets: openaiTarget, policies: { maxTokens: { cap: 100, onExceed: "reject" }, sampling: { onUnsupported: "reject" } } },
      "strict-then-claude": { targets: [...openaiTarget, ...claudeTarget], policies: { sampling: { onUnsupported: "reject" } } },
      "json-gpt": { targets: openaiTarget, policies: { format: { type: "json" } } },
      // Prefill is for models before Claude 4.6 (4.6 and later answer it with a 400).
      "json-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }], policies: { format: { type: "json", prefill: true } } },
      "json-claude-new": { targets: claudeTarget, policies: { format: { type: "json", prefill: true } } },
      "json-claude-unlisted": { targets: [{ provider: "anthropic", model: "claude-opus-6" }], policies: { format: { type: "json", prefill: true } } },
      "json-claude-3": { targets: [{ provider: "anthropic", model: "claude-3-7-sonnet-20250219" }], policies: { format: { type: "json", prefill: true } } },
      sampled: { targets: openaiTarget, policies: { sampling: { temperature: { default: 0.7, min: 0, max: 1 } } } },
      fixed: { targets: [{ provider: "anthropic", model: "claude-sonnet-5" }] },
      reasoning: { targets: [{ provider: "openai", model: "o3" }], policies: { stop: { sequences: ["END"] } } },
      "cached-claude": { targets: claudeTarget, policies: { promptCache: { mode: "auto", ttl: "5m", minRepeats: 2 } } },
      "cached-claude-always": { targets: claudeTarget, policies: { promptCache: { mode: "always", ttl: "1h" } } },
      "cached-gpt": { targets: openaiTarget, policies: { promptCache: { mode: "auto" } } },
      answers: { targets: openaiTarget, policies: { responseCache: { ttlSeconds: 60 } } },
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});
beforeEach(() => {
  mocks.openai.reset();
  mocks.anthropic.reset();
});

function post(path: string, body: object) {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const chat = (body: object) => post("/v1/chat/completions", body);
const user = (content: string) => [{ role: "user", content }];
const recordOf = (response: Response) => waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);

describe("maxTokens", () => {
  it("fills in the route's default and clamps to its cap, and says so", async () => {
    const defaulted = await chat({ model: "capped", messages: user("hi") });
    expect(mocks.openai.requests.at(-1)!.body.max_completion_tokens).toBe(512);
    expect(defaulted.headers.get("x-tollgate-policies")).toContain("max_tokens=default:512");

    const clamped = await chat({ model: "capped", messages: user("hi"), max_tokens: 8000 });
    expect(clamped.status).toBe(200);
    expect(mocks.openai.requests.at(-1)!.body.max_completion_tokens).toBe(1024);
    expect(clamped.headers.get("x-tollgate-policies")).toContain("max_tokens=clamped:8000->1024");
    expect((await recordOf(clamped)).policies).toContain("max_tokens=clamped:8000->1024");
  });

  it("rejects above the cap when the route says so, naming the cap, and leaves no record", async () => {
    const rejected = await chat({ model: "strict", messages: user("hi"), max_completion_tokens: 4000 });
    expect(rejected.status).toBe(400);
    // Named as the client sent it (the o-series take no max_tokens): was "send max_tokens of at most 100".
    expect(await rejected.json()).toMatchObject({ error: { param: "max_completion_tokens", message: "max_completion_tokens 4000 is above this route's cap of 100: send max_completion_tokens of at most 100" } });
    expect(mocks.openai.requests).toHaveLength(0);
    await expect(waitForRecord(gateway, rejected.headers.get("x-tollgate-request-id")!, 300)).rejects.toThrow(/no cost record/);
  });

  it("tells an OpenAI client that names no max_tokens the 4,096 sent to Claude, which requires one", async () => {
    // Was silent: an answer cut there read finish_reason "length" with nothing saying why.
    const response = await chat({ model: "json-claude-new", messages: user("Write the whole module.") });
    expect(response.status).toBe(200);
    expect(mocks.anthropic.requests.at(-1)!.body.max_tokens).toBe(4096);
    expect(response.headers.get("x-tollgate-policies")).toContain("max_tokens=claude-default:4096");
    expect((await recordOf(response)).policies).toContain("max_tokens=claude-default:4096");
  });

  it("never asks a model for more than its own maximum output (Anthropic dialect, required max_tokens)", async () => {
    const response = await post("/v1/messages", { model: "gpt", max_tokens: 50_000, messages: user("hi") });
    expect(response.status).toBe(200);
    // gpt-4o answers at most 16,384 tokens.
    expect(mocks.openai.requests.at(-1)!.body.max_completion_tokens).toBe(16_384);
    expect((await recordOf(response)).policies).toContain("max_tokens=model-max:50000->16384");
  });
});

describe("stop", () => {
  it("merges the route's sequences after the client's, without duplicates", async () => {
    const response = await chat({ model: "capped", messages: user("hi"), stop: ["END", "\n\nUser:"] });
    expect(mocks.openai.requests.at(-1)!.body.stop).toEqual(["END", "\n\nUser:"]);
    expect(response.headers.get("x-tollgate-policies") ?? "").not.toContain("stop=merged");
    await chat({ model: "capped", messages: user("hi"), stop: "END" });
    expect(mocks.openai.requests.at(-1)!.body.stop).toEqual(["END", "\n\nUser:"]);
  });

  it("trims to what the model takes (OpenAI: 4; o3: none), with a warning in the record instead of a 400", async () => {
    const many = await chat({ model: "gpt", messages: user("hi"), stop: ["a", "b", "c", "d", "e"] });
    expect(many.status).toBe(200);
    expect(mocks.openai.requests.at(-1)!.body.stop).toEqual(["a", "b", "c", "d"]);
    const record = await recordOf(many);
    expect(record.policies).toContain("stop=trimmed:5->4");
    expect(record.warnings.join()).toContain('not sent: "e"');

    const reasoning = await chat({ model: "reasoning", messages: user("hi") });
    expect(mocks.openai.requests.at(-1)!.body).not.toHaveProperty("stop");
    expect((await recordOf(reasoning)).policies).toEqual(expect.arrayContaining(["stop=merged:1", "stop=trimmed:1->0"]));
  });
});

describe("format-first", () => {
  it("OpenAI: the JSON instruction is the system prompt's first line (created), and json_object goes natively", async () => {
    const response = await chat({ model: "json-gpt", messages: user("List three colours") });
    const sent = mocks.openai.requests.at(-1)!.body;
    expect(sent.messages[0]).toEqual({ role: "system", content: "Respond with a single JSON object and nothing else." });
    expect(sent.response_format).toEqual({ type: "json_object" });
    expect((await recordOf(response)).policies).toContain("format=json");
  });

  it("Anthropic: the instruction is the first line of the system prompt, and a prefilled { comes back to the client", async () => {
    mocks.anthropic.enqueue({ kind: "text", text: '"colours": ["red"]}' });
    const response = await gateway.openai.chat.completions.create({
      model: "json-claude",
      messages: [{ role: "system", content: "You name colours." }, ...user("List a colour")] as never,
    });
    const sent = mocks.anthropic.requests.at(-1)!.body;
    expect(sent.system[0].text.split("\n")[0]).toBe("Respond with a single JSON object and nothing else.");
    expect(sent.system[0].text.split("\n")[1]).toBe("You name colours.");
    expect(sent.messages.at(-1)).toEqual({ role: "assistant", content: "{" });
    expect(JSON.parse(response.choices[0]!.message.content!)).toEqual({ colours: ["red"] });

    mocks.anthropic.enqueue({ kind: "text", chunks: ['"ok"', ": true}"] });
    const stream = await gateway.openai.chat.completions.create({ model: "json-claude", messages: user("ok?") as never, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(JSON.parse(text)).toEqual({ ok: true });
  });

  it("Anthropic 4.6 and later: no prefill (they refuse it), the format instruction alone, and a warning", async () => {
    const response = await chat({ model: "json-claude-new", messages: user("List a colour") });
    expect(response.status).toBe(200);
    const sent = mocks.anthropic.requests.at(-1)!.body;
    expect(sent.messages.at(-1).role).toBe("user");
    expect(sent.system[0].text).toBe("Respond with a single JSON object and nothing else.");
    const record = await recordOf(response);
    expect(record.policies).toContain("format=prefill-unsupported");
    expect(record.warnings.join()).toContain("claude-sonnet-4-6 does not accept a prefilled answer");
  });

  it("a Claude model the list does not know gets no prefill either: newer models refuse it", async () => {
    // Was: prefilled, and a model newer than the list answered every request with a 400.
    const response = await chat({ model: "json-claude-unlisted", messages: user("List a colour") });
    expect(response.status).toBe(200);
    expect(mocks.anthropic.requests.at(-1)!.body.messages.at(-1).role).toBe("user");
    const record = await recordOf(response);
    expect(record.policies).toContain("format=prefill-unknown-model");
    expect(record.warnings.join()).toContain("claude-opus-6 is not in tollgate's model list");
    // A Claude 3 model, older than the list, takes it.
    mocks.anthropic.enqueue({ kind: "text", text: '"ok": true}' });
    const older = await chat({ model: "json-claude-3", messages: user("List a colour") });
    expect(older.status).toBe(200);
    expect(mocks.anthropic.requests.at(-1)!.body.messages.at(-1)).toMatchObject({ role: "assistant" });
    expect((await recordOf(older)).policies).toContain("format=prefill");
  });
});

describe("format with Claude's thinking", () => {
  it("sends no prefill when the client asks Claude to think, which Claude refuses, and says why", async () => {
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "json-claude", max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 2048 }, messages: user("List a colour") }),
    });
    expect(response.status).toBe(200);
    const sent = mocks.anthropic.requests.at(-1)!.body;
    expect(sent.messages.at(-1).role).toBe("user");
    expect(sent.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    const record = await recordOf(response);
    expect(record.policies).toContain("format=prefill-unsupported");
    expect(record.warnings.join()).toContain("does not accept a prefilled answer while it thinks");
  });
});

describe("brevity", () => {
  it("adds the instruction at the end of the system prompt and records it", async () => {
    const response = await chat({ model: "capped", messages: [{ role: "system", content: "You help." }, ...user("hi")] });
    expect(mocks.openai.requests.at(-1)!.body.messages[0]).toEqual({ role: "system", content: "You help.\nAnswer in at most 3 sentences." });
    expect((await recordOf(response)).policies).toContain("brevity=3");
  });
});

describe("sampling", () => {
  it("applies the route's default and range, and drops what the target does not take", async () => {
    const defaulted = await chat({ model: "sampled", messages: user("hi") });
    expect(mocks.openai.requests.at(-1)!.body.temperature).toBe(0.7);
    expect((await recordOf(defaulted)).policies).toContain("temperature=default:0.7");

    const clamped = await chat({ model: "sampled", messages: user("hi"), temperature: 1.8, top_k: 40 });
    const sent = mocks.openai.requests.at(-1)!.body;
    expect(sent.temperature).toBe(1);
    expect(sent).not.toHaveProperty("top_k"); // OpenAI has no top_k
    const record = await recordOf(clamped);
    expect(record.policies).toEqual(expect.arrayContaining(["temperature=clamped:1.8->1", "top_k=dropped"]));
    expect(record.warnings.join()).toContain("top_k 40 was not sent");
  });

  it("drops non-default sampling for the newest Claude models, or rejects it when the route says so", async () => {
    const dropped = await post("/v1/messages", { model: "fixed", max_tokens: 50, temperature: 0.2, messages: user("hi") });
    expect(dropped.status).toBe(200);
    expect(mocks.anthropic.requests.at(-1)!.body).not.toHaveProperty("temperature");
    expect((await recordOf(dropped)).policies).toContain("temperature=dropped");
    // Above Claude's range, as an OpenAI client may send it: dropped as sent, not first "clamped"
    // (was: `temperature=clamped:1.5->1`, then a warning that temperature 1 was not sent).
    const high = await chat({ model: "fixed", temperature: 1.5, messages: user("hi") });
    const highRecord = await recordOf(high);
    expect(highRecord.policies.filter((note) => note.startsWith("temperature"))).toEqual(["temperature=dropped"]);
    expect(highRecord.warnings.join()).toContain("temperature 1.5 was not sent");

    // The route's rule, not a reason to move on: the fallback would take top_k (Anthropic has
    // it), but the route asked for the 400 (was: Claude answered, and nothing said why).
    mocks.anthropic.reset();
    const notMovedOn = await chat({ model: "strict-then-claude", messages: user("hi"), top_k: 5 });
    expect(notMovedOn.status).toBe(400);
    expect(await notMovedOn.json()).toMatchObject({ error: { param: "top_k", code: "unsupported_parameter" } });
    expect(mocks.anthropic.requests).toHaveLength(0);

    mocks.openai.reset();
    const rejected = await chat({ model: "strict", messages: user("hi"), top_k: 5 });
    expect(rejected.status).toBe(400);
    expect(await rejected.json()).toMatchObject({ error: { param: "top_k", code: "unsupported_parameter" } });
    expect(mocks.openai.requests).toHaveLength(0);
  });
});

describe("prompt caching", () => {
  // About 1,500 tokens: above claude-sonnet-4-6's 1,024-token minimum.
  const longSystem = "You are a meticulous support agent. ".repeat(250);

  it("Anthropic: no breakpoints on the first sighting, system and conversation breakpoints on the second", async () => {
    const body = { model: "cached-claude", max_tokens: 50, system: longSystem, messages: user("Where is my order 4412?") };
    const first = await post("/v1/messages", body);
    const firstSent = mocks.anthropic.requests.at(-1)!.body;
    expect(JSON.stringify(firstSent)).not.toContain("cache_control");
    expect((await recordOf(first)).policies).toContain("prompt_cache=first-sighting");

    mocks.anthropic.enqueue({ kind: "text", text: "On its way.", usage: { input_tokens: 12, output_tokens: 4, cache_read_input_tokens: 1500 } });
    const second = await post("/v1/messages", body);
    const sent = mocks.anthropic.requests.at(-1)!.body;
    expect(sent.system.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "5m" });
    expect(sent.messages[0].content.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "5m" });
    expect(second.headers.get("x-tollgate-policies")).toContain("prompt_cache=system+conversation:5m");
    // 1500 cache reads at $0.30 instead of $3 per 1M: 1500 × 2700 = 4,050,000 nano saved.
    expect(second.headers.get("x-tollgate-cache-savings-usd")).toBe("0.00405");
    expect((await recordOf(second)).cost.cacheSavingsNano).toBe(4_050_000);
  });

  it("Anthropic: a continuing conversation caches through its latest user turn, and through the earlier request's end", async () => {
    const system = longSystem + " Conversation test.";
    const turn1 = user("First question");
    await post("/v1/messages", { model: "cached-claude", max_tokens: 50, system, messages: turn1 });
    await post("/v1/messages", {
      model: "cached-claude",
      max_tokens: 50,
      system,
      messages: [...turn1, { role: "assistant", content: "First answer" }, ...user("Second question")],
    });
    const sent = mocks.anthropic.requests.at(-1)!.body;
    expect(sent.messages).toHaveLength(3);
    expect(sent.messages[2].content.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "5m" });
    // Where the first request wrote its cache: read there, however far back the latest turn is.
    expect(sent.messages[0].content.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "5m" });
  });

  it("Anthropic: an agent step of 12 parallel tool calls still reads what the step before wrote (four breakpoints at most)", async () => {
    // Anthropic looks for an earlier write only about 20 blocks back from a breakpoint; this step
    // adds 25 (the answer, 12 tool_use, 12 tool_result). Was: one breakpoint, on the latest turn,
    // and every such step wrote the whole conversation again at 1.25x input.
    const tools = ["lookup_order", "lookup_customer"].map((name) => ({ name, input_schema: { type: "object" } }));
    const system = longSystem + " Agent test.";
    const task = user("Audit these order records: " + "Order 4412 shipped late from the south warehouse. ".repeat(200));
    await post("/v1/messages", { model: "cached-claude", max_tokens: 50, system, tools, messages: task });
    const uses = Array.from({ length: 12 }, (_, index) => ({ type: "tool_use", id: `toolu_${index}`, name: "lookup_order", input: { id: `44${index}` } }));
    const results = uses.map((use) => ({ type: "tool_result", tool_use_id: use.id, content: "late" }));
    await post("/v1/messages", { model: "cached-claude", max_tokens: 50, system, tools, messages: [...task, { role: "assistant", content: uses }, { role: "user", content: results }] });
    const sent = mocks.anthropic.requests.at(-1)!.body;
    expect(sent.messages[0].content.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "5m" });
    expect(sent.messages[2].content.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "5m" });
    expect(JSON.stringify(sent).match(/"cache_control"/g)).toHaveLength(4); // tools, system and the two turns
  });

  it("Anthropic: a conversation continuing after parallel tool calls caches through its latest turn too", async () => {
    // Several tool results come back in a row; the earlier request ended before all of them. Was:
    // the "previous turn" was taken as the first of those results, a prefix no request had sent,
    // and an agent calling tools in parallel never had its conversation cached.
    const tools = ["lookup_order", "lookup_customer"].map((name) => ({ name, input_schema: { type: "object" } }));
    const task = user("Audit these order records: " + "Order 4412 shipped late from the north warehouse. ".repeat(200));
    await post("/v1/messages", { model: "cached-claude", max_tokens: 50, tools, messages: task });
    const uses = tools.map((tool, index) => ({ type: "tool_use", id: `toolu_${index}`, name: tool.name, input: { id: "4412" } }));
    const next = await post("/v1/messages", {
      model: "cached-claude",
      max_tokens: 50,
      tools,
      messages: [...task, { role: "assistant", content: uses }, { role: "user", content: uses.map((use) => ({ type: "tool_result", tool_use_id: use.id, content: "late" })) }],
    });
    expect(next.headers.get("x-tollgate-policies")).toContain("prompt_cache=conversation:5m");
    expect(mocks.anthropic.requests.at(-1)!.body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "5m" });
  });

  it("Anthropic: nothing is placed below the model's minimum cacheable length, however often it repeats", async () => {
    const body = { model: "cached-claude-always", max_tokens: 50, system: "Short system prompt.", messages: user("hi") };
    await post("/v1/messages", body);
    const again = await post("/v1/messages", body);
    expect(JSON.stringify(mocks.anthropic.requests.at(-1)!.body)).not.toContain("cache_control");
    expect((await recordOf(again)).policies.join()).toMatch(/prompt_cache=below-min:\d+<1024/);
  });

  it("Anthropic: the tools Anthropic defines count at what Claude expands them to, so a prefix they carry over the minimum is cached", async () => {
    // The text editor adds 700 input tokens and bash 245 (Anthropic's tool pages): with a system
    // prompt of about 150 tokens the prefix is over 1,024, though its own bytes are far from it.
    // Was: below-min, and an agent with these tools never had its prefix cached.
    const system = "You are a careful coding agent working in a TypeScript repository. ".repeat(12);
    const tools = [{ type: "text_editor_20250728", name: "str_replace_based_edit_tool" }, { type: "bash_20250124", name: "bash" }];
    const response = await post("/v1/messages", { model: "cached-claude-always", max_tokens: 50, system, tools, messages: user("Fix the build.") });
    expect(response.status).toBe(200);
    expect(mocks.anthropic.requests.at(-1)!.body.system.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
  });

  it("Anthropic `always` mode with a 1 h TTL writes on the first sighting", async () => {
    await post("/v1/messages", { model: "cached-claude-always", max_tokens: 50, system: longSystem, messages: user("hi") });
    expect(mocks.anthropic.requests.at(-1)!.body.system.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
  });

  it("Anthropic: a client's own cache_control breakpoints reach the provider as sent, and the policy adds none", async () => {
    const body = {
      max_tokens: 50,
      system: [{ type: "text", text: longSystem, cache_control: { type: "ephemeral" } }],
      tools: [{ name: "lookup", input_schema: { type: "object" }, cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "Order 4412?", cache_control: { type: "ephemeral", ttl: "1h" } }] }],
    };
    await post("/v1/messages", { ...body, model: "claude" });
    const plain = mocks.anthropic.requests.at(-1)!.body;
    expect(plain.system).toEqual([{ type: "text", text: longSystem, cache_control: { type: "ephemeral", ttl: "5m" } }]);
    expect(plain.tools[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(plain.messages[0].content[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });

    const withPolicy = await post("/v1/messages", { ...body, model: "cached-claude-always" });
    expect(mocks.anthropic.requests.at(-1)!.body).toEqual({ ...plain, model: "claude-sonnet-4-6" });
    expect((await recordOf(withPolicy)).policies).toContain("prompt_cache=client");
  });

  it("OpenAI: one prompt_cache_key per route and prefix, and the request's order untouched", async () => {
    const messages = [{ role: "system", content: "Stable instructions." }, ...user("one")];
    await chat({ model: "cached-gpt", messages });
    const firstKey = mocks.openai.requests.at(-1)!.body.prompt_cache_key;
    await chat({ model: "cached-gpt", messages: [messages[0], ...user("two")] });
    const sent = mocks.openai.requests.at(-1)!.body;
    expect(firstKey).toMatch(/^tg-[0-9a-f]{32}$/);
    expect(sent.prompt_cache_key).toBe(firstKey);
    expect(sent.messages).toEqual([{ role: "system", content: "Stable instructions." }, { role: "user", content: "two" }]);
    await chat({ model: "cached-gpt", messages: [{ role: "system", content: "Other instructions." }, ...user("two")] });
    expect(mocks.openai.requests.at(-1)!.body.prompt_cache_key).not.toBe(firstKey);
  });

  it("OpenAI: a client's own prompt_cache_key goes as sent, on a route with the policy or without", async () => {
    // Was: accepted and ignored, and the policy's key put in its place.
    const messages = [{ role: "system", content: "Stable instructions." }, ...user("one")];
    const cached = await chat({ model: "cached-gpt", messages, prompt_cache_key: "support-bot-v3" });
    expect(mocks.openai.requests.at(-1)!.body.prompt_cache_key).toBe("support-bot-v3");
    expect((await recordOf(cached)).policies).toContain("prompt_cache=client");
    await chat({ model: "gpt", messages, prompt_cache_key: "support-bot-v3" });
    expect(mocks.openai.requests.at(-1)!.body.prompt_cache_key).toBe("support-bot-v3");
  });
});

describe("response cache", () => {
  it("serves a second identical deterministic request without calling upstream, at $0 with the savings", async () => {
    mocks.openai.enqueue({ kind: "text", text: "Forty-two.", usage: { prompt_tokens: 100, completion_tokens: 10 } });
    const body = { model: "answers", temperature: 0, messages: user("Meaning of life?") };
    const miss = await chat(body);
    expect(miss.headers.get("x-tollgate-cache")).toBe("miss");
    const missRecord = await recordOf(miss);
    // 100 × 2500 + 10 × 10,000 = 350,000 nano.
    expect(missRecord.cost.totalNano).toBe(350_000);
    expect(mocks.openai.requests).toHaveLength(1);

    const hit = await chat(body);
    expect(mocks.openai.requests).toHaveLength(1);
    expect(hit.headers.get("x-tollgate-cache")).toBe("hit");
    expect(hit.headers.get("x-tollgate-cost-usd")).toBe("0");
    const hitBody = (await hit.json()) as { choices: { message: { content: string } }[]; usage: object };
    expect(hitBody.choices[0]!.message.content).toBe("Forty-two.");
    // The kept answer as it was made, usage included; what this request cost is in the headers.
    expect(hitBody.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 });
    const hitRecord = await recordOf(hit);
    expect(hitRecord).toMatchObject({ status: "ok", provider: "openai", model: "gpt-4o", cost: { totalNano: 0, cacheSavingsNano: 350_000 } });
    expect(hitRecord.policies).toContain("response_cache=hit");

    // The same answer, streamed, still without calling upstream, and with the same usage.
    const streamed = await chat({ ...body, stream: true, stream_options: { include_usage: true } });
    expect(streamed.headers.get("x-tollgate-cache")).toBe("hit");
    const events = await readSseEvents(streamed);
    const text = events
      .filter((event) => event.data.startsWith("{") && event.data.includes('"choices"'))
      .map((event) => JSON.parse(event.data).choices[0]?.delta?.content ?? "")
      .join("");
    expect(text).toBe("Forty-two.");
    const usageChunks = events.filter((event) => event.data.startsWith("{") && JSON.parse(event.data).usage);
    expect(usageChunks.map((event) => JSON.parse(event.data).usage)).toMatchObject([{ prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }]);
    expect(mocks.openai.requests).toHaveLength(1);
  });

  it("keeps a streamed answer too, and leaves sampled requests alone", async () => {
    mocks.openai.enqueue({ kind: "text", chunks: ["Blue", " sky."] });
    // The Anthropic dialect has no seed: temperature 0 makes it deterministic.
    const body = { model: "answers", temperature: 0, messages: user("Sky colour?") };
    const anthropicStream = await gateway.anthropic.messages
      .create({ ...body, max_tokens: 20, stream: true } as never)
      .withResponse();
    for await (const _event of anthropicStream.data as unknown as AsyncIterable<unknown>) {
      // drain
    }
    expect(anthropicStream.response.headers.get("x-tollgate-cache")).toBe("miss");
    const hit = await post("/v1/messages", { ...body, max_tokens: 20 });
    expect(hit.headers.get("x-tollgate-cache")).toBe("hit");
    const hitBody = await hit.json();
    expect(hitBody).toMatchObject({ content: [{ type: "text", text: "Blue sky." }] });
    // Streamed again from the cache: the SDK's final message says what the unstreamed hit says.
    const streamedHit = await gateway.anthropic.messages.stream({ ...body, max_tokens: 20 } as never).finalMessage();
    expect(streamedHit.content).toEqual(hitBody.content);
    // The kept answer's usage as the upstream reported it (the mock: 2 prompt words, 2 chunks).
    expect(hitBody.usage).toMatchObject({ input_tokens: 2, output_tokens: 2 });
    expect(streamedHit.usage).toMatchObject({ input_tokens: hitBody.usage.input_tokens, output_tokens: hitBody.usage.output_tokens });
    expect(mocks.openai.requests).toHaveLength(1);

    const sampled = await chat({ model: "answers", temperature: 0.8, messages: user("Sky colour?") });
    expect(sampled.headers.get("x-tollgate-cache")).toBeNull();
    expect(mocks.openai.requests).toHaveLength(2);
  });
});
