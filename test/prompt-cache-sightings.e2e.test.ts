import { describe, expect, it } from "vitest";
import { APP_KEY, postJson, sha256, useMockedGateway } from "./support/gateway.ts";

// The promptCache policy ("auto") counts prefix sightings per team, so x-tollgate-policies
// ("first-sighting" vs "conversation:5m") tells a caller only what its own team sent.
// Was: sightings were keyed by model + prompt alone, an oracle any tenant could ask whether
// another tenant sent exactly this conversation (a guessed document, ticket or question) within
// the TTL, even through a route of its own. (The provider's own cache gives no such signal here:
// in auto mode the first request writes nothing upstream.)

const OTHER_TENANT_KEY = "tg_test_other_tenant_key_0123456789";
const SAME_TEAM_KEY = "tg_test_same_team_key_0123456789";

const rig = useMockedGateway(
  {
    "support-bot": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { promptCache: { mode: "auto" } } },
    "finance-bot": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { promptCache: { mode: "auto" } } },
    "opus-4-1-cached": { targets: [{ provider: "anthropic", model: "claude-opus-4-1" }], policies: { promptCache: { mode: "auto" } } },
  },
  [
    { id: "finance-app", team: "finance", hash: sha256(OTHER_TENANT_KEY), routes: ["finance-bot"] },
    { id: "search-batch", team: "search", hash: sha256(SAME_TEAM_KEY) },
  ],
);

/** A conversation above Sonnet's 1024-token cache minimum. */
const conversation = (secret: string) => [
  { role: "system", content: "You are a helpful assistant. ".repeat(10) },
  { role: "user", content: `Summarize this private HR case file. Employee: ${secret}. ` + "Details of the case follow in full. ".repeat(300) },
];

async function policiesSeenBy(key: string, route: string, secret: string): Promise<string> {
  const response = await postJson(rig.gateway, "/v1/chat/completions", { model: route, max_tokens: 16, messages: conversation(secret) }, key);
  expect(response.status).toBe(200);
  await response.text();
  return response.headers.get("x-tollgate-policies") ?? "";
}

describe("prompt-cache sightings", () => {
  it("tell a tenant nothing about what another tenant sent", async () => {
    // The victim (key "app", team search) sends its conversation on its own route.
    await policiesSeenBy(APP_KEY, "support-bot", "Jane Doe, salary 182,000");

    // Another tenant, on a route of its own, probes a guess it knows nobody sent, then the right guess.
    const unseen = await policiesSeenBy(OTHER_TENANT_KEY, "finance-bot", "John Roe, salary 95,000");
    const guessed = await policiesSeenBy(OTHER_TENANT_KEY, "finance-bot", "Jane Doe, salary 182,000");
    expect(unseen).toContain("prompt_cache=first-sighting");
    expect(guessed).toBe(unseen);
  });

  it("are still shared within a team, so its repeated prefixes are cached", async () => {
    await policiesSeenBy(APP_KEY, "support-bot", "Ann Poe, salary 70,000");
    expect(await policiesSeenBy(SAME_TEAM_KEY, "support-bot", "Ann Poe, salary 70,000")).toContain("prompt_cache=conversation:5m");
  });
});

describe("sightings of a prompt that carries the client's JSON Schema", () => {
  // On a Claude model without structured outputs, the format policy writes the client's schema
  // into the system prompt. The prompt cache counted the prefix before it did: two requests that
  // differed only in their schema counted as one prefix seen twice, and the second paid a 1.25x
  // cache write on a prefix never sent before.
  const schema = (field: string) => ({
    type: "json_schema" as const,
    json_schema: { name: "order", schema: { type: "object", properties: { [field]: { type: "string" } }, required: [field], additionalProperties: false }, strict: true },
  });
  const system = "You extract order details from customer emails. ".repeat(200);

  it("counts the prompt as sent: another schema is another prefix", async () => {
    const ask = (field: string) =>
      rig.gateway.openai.chat.completions.create({ model: "opus-4-1-cached", messages: [{ role: "system", content: system }, { role: "user", content: "email 1" }], response_format: schema(field) });
    await ask("orderId");
    const first = rig.mocks.anthropic.requests.at(-1)!.body as { system: { text: string }[] };
    await ask("customerName");
    const second = rig.mocks.anthropic.requests.at(-1)!.body as { system: { text: string }[] };
    expect(second.system[0]!.text).not.toBe(first.system[0]!.text);
    expect(JSON.stringify(second.system)).not.toContain("cache_control");
    // The same schema again is a repeat, and is marked (so the test above can fail).
    await ask("customerName");
    expect(JSON.stringify(rig.mocks.anthropic.requests.at(-1)!.body.system)).toContain("cache_control");
  });
});
