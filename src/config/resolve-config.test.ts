import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "./resolve-config.ts";

const HASH = `sha256:${"a".repeat(64)}`;
const base = () => ({
  providers: { openai: { type: "openai", apiKey: { env: "OPENAI_API_KEY" } } },
  routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] } },
  keys: [{ id: "app", team: "search", hash: HASH }],
});

function problemsOf(raw: unknown, env: Record<string, string> = {}): string[] {
  try {
    resolveConfig(raw, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("resolveConfig", () => {
  it("reads secrets from the environment and applies defaults", () => {
    const config = resolveConfig(base(), { OPENAI_API_KEY: "sk-live" });
    expect(config.providers.openai?.apiKeyValue).toBe("sk-live");
    expect(config.providers.openai?.maxRetries).toBeUndefined(); // left out: the SDK adapters retry 0 times
    expect(config.server.maxBodyBytes).toBe(4 * 1024 * 1024);
  });

  it("stops start-up when a required key variable is missing, naming the variable", () => {
    expect(problemsOf(base())).toEqual([
      'providers.openai.apiKey: environment variable OPENAI_API_KEY is not set; set it, or mark the provider "optional": true',
    ]);
  });

  // A key of spaces (a stray `export OPENAI_API_KEY=" "`) passed start-up, and every call then
  // failed at the provider.
  it("stops start-up when a required key variable is blank, as when it is missing", () => {
    expect(problemsOf(base(), { OPENAI_API_KEY: " \t" })).toEqual([
      'providers.openai.apiKey: environment variable OPENAI_API_KEY is blank; set it, or mark the provider "optional": true',
    ]);
  });

  it("starts with an optional provider's key missing and reports it", () => {
    const raw = base();
    (raw.providers.openai as Record<string, unknown>).optional = true;
    const config = resolveConfig(raw, {});
    expect(config.providers.openai?.unavailableReason).toBe('provider "openai" has no API key: set OPENAI_API_KEY and restart tollgate');
    expect(config.warnings).toHaveLength(1);
  });

  it("refuses a literal secret and says how to write it", () => {
    const raw = base();
    (raw.providers.openai as Record<string, unknown>).apiKey = "sk-live-123";
    expect(problemsOf(raw, { OPENAI_API_KEY: "x" })).toEqual([
      'providers.openai.apiKey: secrets are never written in config: write {"env": "NAME_OF_VARIABLE"} and set that variable',
    ]);
  });

  it("names the path of every mistake at once", () => {
    const raw = {
      ...base(),
      routes: { gpt: { targets: [{ provider: "openia", model: "gpt-4o" }], stratgy: "x" } },
      keys: [{ id: "app", team: "t", hash: "md5:abc", routes: ["nope"] }],
      admin: { keyHash: "sha256:<the admin key's hash>" },
    };
    const problems = problemsOf(raw, { OPENAI_API_KEY: "x" });
    // The admin key's hash comes from `keys create --admin`, not from `keys create`.
    expect(problems).toContain('admin.keyHash: write "sha256:" and 64 lowercase hex digits; `npx tollgate keys create --admin` prints one');
    expect(problems).toContain('routes.gpt: unknown field "stratgy"; check the spelling against config/tollgate.schema.json');
    expect(problems).toContain('keys[0].hash: write "sha256:" and 64 lowercase hex digits; `npx tollgate keys create` prints one');
    expect(problems.length).toBeGreaterThanOrEqual(2);
  });

  it("rejects a target naming an unknown provider, listing the known ones", () => {
    const raw = { ...base(), routes: { gpt: { targets: [{ provider: "openia", model: "gpt-4o" }] } } };
    expect(problemsOf(raw, { OPENAI_API_KEY: "x" })).toEqual([
      'routes.gpt.targets[0].provider: unknown provider "openia": define it under "providers" or use one of openai',
    ]);
  });
});
