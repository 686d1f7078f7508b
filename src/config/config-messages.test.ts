import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "./resolve-config.ts";

// PRODUCT.md: "Config is one JSON file validated with zod (errors name the path and the fix)".
// Several common mistakes used to get zod's generic text ("Invalid input: expected string,
// received undefined"), which names the path and the type but not what to write.

function problems(config: unknown): string[] {
  try {
    resolveConfig(config, {});
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("config was accepted");
}

const local = { type: "openai-compatible", baseUrl: "http://127.0.0.1:8080/v1" };

describe("config errors say what to write", () => {
  it.each([
    ["no providers at all", { routes: {} }],
    ["a target without its model", { providers: { local }, routes: { chat: { targets: [{ provider: "local" }] } } }],
    ["a key without its hash", { providers: { local }, routes: { chat: { targets: [{ provider: "local", model: "m" }] } }, keys: [{ id: "a", team: "t" }] }],
  ])("%s", (_what, config) => {
    const found = problems(config);
    expect(found.length).toBeGreaterThan(0);
    for (const problem of found) expect(problem).toMatch(/^[\w.[\]]+: required: \S/);
  });
});

describe("a value of the wrong JSON type", () => {
  // zod's default ("Invalid input: expected number, received string") named the type, not the fix.
  it("says what to write instead, wherever the schema has no message of its own", () => {
    const found = problems({ providers: { local }, routes: { chat: { targets: [{ provider: "local", model: "m" }], strategy: "cheapest", latencyGoalMs: "2000" } } });
    expect(found).toEqual(["routes.chat.latencyGoalMs: write a number, not a string"]);
    expect(problems([])).toEqual(["(top level): write a JSON object, not an array"]);
  });
});

describe("messages that said the opposite of what was written", () => {
  const chat = (extra: object) => ({ providers: { local }, routes: { chat: { targets: [{ provider: "local", model: "m" }], ...extra } } });
  const hash = "sha256:" + "a".repeat(64);

  it("a fraction where a whole number goes is called a fraction (was: 'write a whole number, not a number')", () => {
    expect(problems(chat({ rateLimit: { rpm: 1.5 } }))).toEqual(["routes.chat.rateLimit.rpm: write a whole number, not a fraction"]);
  });

  it("a field that is there with the wrong type is not called missing (was: 'keys[0].id: required: …')", () => {
    const found = problems({ ...chat({}), keys: [{ id: 5, team: null, hash: 1 }] });
    expect(found).toEqual([
      'keys[0].id: write a string, not a number: a name for this key that its cost records carry, such as "search-app"',
      'keys[0].team: write a string, not null: the team this key bills to, such as "search"',
      'keys[0].hash: write a string, not a number: "sha256:" and 64 lowercase hex digits; `npx tollgate keys create` prints one',
    ]);
    expect(problems({ providers: [], routes: chat({}).routes, keys: [{ id: "a", team: "t", hash }] })[0]).toMatch(/^providers: write a JSON object, not an array: /);
    expect(problems({ ...chat({}), routes: { chat: { targets: [{ provider: true, model: "m" }] } } })).toEqual([
      'routes.chat.targets[0].provider: write a string, not true: the name of a provider defined under "providers"',
    ]);
  });

  it("a limit zod checks says what to write (was: 'Too small: expected number to be >0')", () => {
    expect(problems(chat({ rateLimit: { rpm: 0 }, maxCostPerRequestUsd: 0 }))).toEqual([
      "routes.chat.maxCostPerRequestUsd: write a number above 0",
      "routes.chat.rateLimit.rpm: write a number above 0",
    ]);
    expect(problems({ ...chat({}), server: { maxBodyBytes: 0 } })).toEqual(["server.maxBodyBytes: write a number above 0"]);
    expect(problems(chat({ policies: { maxTokens: { cap: 0 } } }))).toEqual(["routes.chat.policies.maxTokens.cap: write a number above 0"]);
    expect(problems(chat({ policies: { stop: { sequences: [] } } }))).toEqual(["routes.chat.policies.stop.sequences: write an array of at least 1 item"]);
    const openai = { type: "openai", apiKey: { env: "OPENAI_API_KEY" }, maxRetries: 11 };
    expect(problems({ ...chat({}), providers: { local, openai } })).toEqual(["providers.openai.maxRetries: write a number of at most 10"]);
  });
});
