import { describe, expect, it } from "vitest";
import { postJson, readSseEvents, useMockedGateway } from "./support/gateway.ts";

// A live Claude stream says its input tokens in message_start, and some Anthropic clients read
// them only there (LangChain's, for one). A cached answer replayed as a stream gave all its usage
// at the end, so message_start said input_tokens 0 on every hit (found by review). The replay now
// gives the input side first, as a live stream does, and the whole usage at the end.

const cached = (provider: string, model: string) => ({ targets: [{ provider, model }], policies: { responseCache: { ttlSeconds: 60 } } });
const rig = useMockedGateway({ "cached-claude": cached("anthropic", "claude-sonnet-4-6"), "cached-gpt": cached("openai", "gpt-4o") });

type Usage = Record<string, unknown>;

/** message_start's usage and the last message_delta's, of one Anthropic stream. */
async function anthropicUsages(response: Response): Promise<{ start: Usage; end: Usage }> {
  const events = await readSseEvents(response);
  const start = JSON.parse(events.find((event) => event.event === "message_start")!.data).message.usage;
  const end = JSON.parse(events.filter((event) => event.event === "message_delta").at(-1)!.data).usage;
  return { start, end };
}

describe("a cached answer replayed as a stream", () => {
  it("to an Anthropic client: message_start and message_delta carry the usage the live stream did", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "Hello there", usage: { input_tokens: 321, output_tokens: 2, cache_read_input_tokens: 100 } });
    const body = { model: "cached-claude", max_tokens: 50, temperature: 0, stream: true, messages: [{ role: "user", content: "hi" }] };
    const live = await postJson(rig.gateway, "/v1/messages", body);
    expect(live.headers.get("x-tollgate-cache")).toBe("miss");
    const liveUsage = await anthropicUsages(live);
    expect(liveUsage.start).toMatchObject({ input_tokens: 321, cache_read_input_tokens: 100 });

    const hit = await postJson(rig.gateway, "/v1/messages", body);
    expect(hit.headers.get("x-tollgate-cache")).toBe("hit");
    const hitUsage = await anthropicUsages(hit);
    expect(hitUsage.start).toMatchObject({ input_tokens: 321, cache_read_input_tokens: 100 });
    expect(hitUsage.end).toEqual(liveUsage.end);
  });

  it("to an OpenAI client that asked for usage: one usage chunk, the live one's", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "Hello there", usage: { prompt_tokens: 40, completion_tokens: 2, cached_tokens: 16 } });
    const body = { model: "cached-gpt", temperature: 0, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] };
    const usagesOf = async (response: Response) =>
      (await readSseEvents(response)).filter((event) => event.data !== "[DONE]").map((event) => JSON.parse(event.data).usage).filter((usage) => usage);
    const live = await usagesOf(await postJson(rig.gateway, "/v1/chat/completions", body));
    const hit = await postJson(rig.gateway, "/v1/chat/completions", body);
    expect(hit.headers.get("x-tollgate-cache")).toBe("hit");
    const replayed = await usagesOf(hit);
    expect(live).toHaveLength(1);
    expect(replayed).toEqual(live);
  });
});
