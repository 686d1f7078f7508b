import { describe, expect, it } from "vitest";
import { APP_KEY, postJson, sha256, useMockedGateway } from "./support/gateway.ts";

// The response cache keys on the neutral ChatRequest (policies/response-cache/response-cache.ts)
// and on who asked. Request fields the OpenAI dialect did not model (frequency_penalty,
// logit_bias) used to be stripped, so two different requests got one key, and the second was
// answered with the first one's cached answer. They are carried now, and so part of the key.
// Answers were also shared by every key on a route, so `x-tollgate-cache: hit` told one tenant
// what another had asked; they are now shared within a team unless the route says otherwise.

const TEAMMATE_KEY = "tg_test_teammate_key_0123456789";
const OUTSIDER_KEY = "tg_test_outsider_key_0123456789";
const cached = (share?: string) => ({
  targets: [{ provider: "openai", model: "gpt-4o" }],
  policies: { responseCache: { ttlSeconds: 60, ...(share ? { share } : {}) } },
});
const rig = useMockedGateway({ answers: cached(), "per-key": cached("key"), "open-answers": cached("route") }, [
  { id: "teammate", team: "search", hash: sha256(TEAMMATE_KEY) },
  { id: "outsider", team: "ops", hash: sha256(OUTSIDER_KEY) },
]);
const chat = (body: object, key = APP_KEY) => postJson(rig.gateway, "/v1/chat/completions", body, key);

/** Asks `route` the same deterministic question as each key in turn; says which got a cached answer. */
async function cacheSightings(route: string, keys: string[]): Promise<string[]> {
  const question = { model: route, temperature: 0, messages: [{ role: "user", content: `Who is asking on ${route}?` }] };
  const seen: string[] = [];
  for (const key of keys) {
    rig.mocks.openai.enqueue({ kind: "text", text: "fresh" });
    const response = await chat(question, key);
    expect(response.status).toBe(200);
    seen.push(response.headers.get("x-tollgate-cache")!);
  }
  return seen;
}

describe("response cache keys", () => {
  it("two requests that differ only in penalties never share a cached answer", async () => {
    const messages = [{ role: "user", content: "Name a colour" }];
    rig.mocks.openai.enqueue({ kind: "text", text: "red red red red" });
    const first = await chat({ model: "answers", temperature: 0, messages, frequency_penalty: 2, logit_bias: { "1234": -100 } });
    expect(first.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body).toMatchObject({ frequency_penalty: 2, logit_bias: { "1234": -100 } });

    rig.mocks.openai.enqueue({ kind: "text", text: "blue" });
    const second = await chat({ model: "answers", temperature: 0, messages });
    expect(second.headers.get("x-tollgate-cache")).toBe("miss");
    expect((await second.json()).choices[0].message.content).toBe("blue");
    expect(rig.mocks.openai.requests).toHaveLength(2);
  });

  // json_schema.description says what the answer is for, and OpenAI reads it: it was dropped by
  // the parser, so it reached neither OpenAI nor the key, and a request with another description
  // was answered from the cache (found by review).
  it("a structured-output description reaches OpenAI, and two requests that differ only in it never share an answer", async () => {
    const messages = [{ role: "user", content: "Describe Oslo" }];
    const format = (description: string) => ({
      type: "json_schema",
      json_schema: { name: "place", description, schema: { type: "object", properties: { summary: { type: "string" } } } },
    });
    rig.mocks.openai.enqueue({ kind: "text", text: '{"summary":"a city"}' });
    expect((await chat({ model: "answers", temperature: 0, messages, response_format: format("for a tourist brochure") })).status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body).toMatchObject({ response_format: { json_schema: { description: "for a tourist brochure" } } });

    rig.mocks.openai.enqueue({ kind: "text", text: '{"summary":"a capital"}' });
    const other = await chat({ model: "answers", temperature: 0, messages, response_format: format("for a tax form") });
    expect(other.headers.get("x-tollgate-cache")).toBe("miss");
    expect(rig.mocks.openai.requests.at(-1)!.body).toMatchObject({ response_format: { json_schema: { description: "for a tax form" } } });
  });

  it("by default a team shares its answers, and another team never sees them", async () => {
    expect(await cacheSightings("answers", [APP_KEY, TEAMMATE_KEY, OUTSIDER_KEY, OUTSIDER_KEY])).toEqual(["miss", "hit", "miss", "hit"]);
    expect(rig.mocks.openai.requests).toHaveLength(2);
  });

  it('share: "key" keeps each key to its own answers', async () => {
    expect(await cacheSightings("per-key", [APP_KEY, TEAMMATE_KEY, APP_KEY])).toEqual(["miss", "miss", "hit"]);
  });

  it('share: "route" answers every key from one cache', async () => {
    expect(await cacheSightings("open-answers", [APP_KEY, OUTSIDER_KEY, TEAMMATE_KEY])).toEqual(["miss", "hit", "hit"]);
  });
});
