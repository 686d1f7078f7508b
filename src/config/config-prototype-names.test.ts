import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";

// configSchema's superRefine checked references with the `in` operator, which also finds
// Object.prototype's members: a target naming provider "toString" or a key naming route
// "constructor" passes validation, and the mistake surfaces only at request time
// (a 503 "no provider of this route is available", with no hint at the config).

const base = () => ({
  providers: { local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:8080/v1" } },
  routes: { chat: { targets: [{ provider: "local", model: "m" }] } },
});

describe("config references to names that exist only on Object.prototype", () => {
  it("rejects a target whose provider is not defined, even if it is named toString", () => {
    const config = { ...base(), routes: { chat: { targets: [{ provider: "toString", model: "m" }] } } };
    expect(() => resolveConfig(config, {})).toThrow(ConfigError);
  });

  it("rejects a key whose routes name an undefined route, even if it is named constructor", () => {
    const config = { ...base(), keys: [{ id: "a", team: "t", hash: `sha256:${"a".repeat(64)}`, routes: ["constructor"] }] };
    expect(() => resolveConfig(config, {})).toThrow(/keys\[0\]\.routes\[0\]/);
  });
});
