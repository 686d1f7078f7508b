import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";

// PRODUCT.md: "Config is one JSON file validated with zod (errors name the path and the fix)".
// config-schema.ts writes its own message for most fields, but several common mistakes still get
// zod's generic text, which names the path and the type but not what to write.

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
    for (const problem of problems(config)) expect(problem).not.toMatch(/Invalid input: expected \w+, received undefined$/);
  });
});
