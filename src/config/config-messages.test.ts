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
