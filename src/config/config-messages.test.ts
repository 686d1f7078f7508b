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
