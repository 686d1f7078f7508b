import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";
import { sha256 } from "../../test/support/gateway.ts";

// PRODUCT.md: "Config is one JSON file validated with zod (errors name the path and the fix)".
// These configs used to pass validation and then fail every request at request time.

const KEY = "tg_review_key_0123456789";
// (with it, every request answers 502 "could not reach provider \"local\"": fetch has no "localhost:" scheme)

function local(baseUrl: string, extra: object = {}) {
  return {
    providers: { local: { type: "openai-compatible", baseUrl, timeoutMs: 2000 } },
    routes: { chat: { targets: [{ provider: "local", model: "m" }], ...extra } },
    keys: [{ id: "a", team: "t", hash: sha256(KEY) }],
  };
}

describe("baseUrl without a scheme", () => {
  it('"localhost:8080/v1" (a user who left out http://) is refused at start-up naming providers.local.baseUrl', () => {
    // z.url() takes "localhost:" for a URL scheme; every request then fails with a 502.
    expect(() => resolveConfig(local("localhost:8080/v1"), {})).toThrow(ConfigError);
  });
});

describe("sampling bounds", () => {
  it("a route's temperature default outside every provider's range, or min above max, is refused at start-up", () => {
    expect(() => resolveConfig(local("http://127.0.0.1:8080/v1", { policies: { sampling: { temperature: { default: 9 } } } }), {})).toThrow(ConfigError);
    expect(() => resolveConfig(local("http://127.0.0.1:8080/v1", { policies: { sampling: { topP: { min: 0.9, max: 0.5 } } } }), {})).toThrow(ConfigError);
  });
});

describe("timeouts", () => {
  it("a timeoutMs above the longest timer Node keeps (2^31 − 1 ms) is refused at start-up, not fired after 1 ms", () => {
    expect(() => resolveConfig(local("http://127.0.0.1:8080/v1"), {})).not.toThrow();
    const config = local("http://127.0.0.1:8080/v1") as { providers: { local: Record<string, unknown> } };
    config.providers.local.timeoutMs = 3_000_000_000;
    expect(() => resolveConfig(config, {})).toThrow(/providers\.local\.timeoutMs: at most 2147483647 ms/);
  });
  it("the drain on a stop signal: 8 s for streams and 15 s for other answers unless the config says, with or without a server block", () => {
    const drains = (server?: object) => {
      const { drainStreamsSeconds, drainAnswersSeconds } = resolveConfig({ ...local("http://127.0.0.1:8080/v1"), ...(server ? { server } : {}) }, {}).server;
      return [drainStreamsSeconds, drainAnswersSeconds];
    };
    expect(drains()).toEqual([8, 15]);
    expect(drains({ maxBodyBytes: 1024 })).toEqual([8, 15]);
    expect(drains({ drainStreamsSeconds: 2, drainAnswersSeconds: 60 })).toEqual([2, 60]);
    expect(() => drains({ drainAnswersSeconds: -1 })).toThrow(/server\.drainAnswersSeconds/);
  });

});

describe("the admin key's name in cost records", () => {
  it('a key id or team "(admin)" is refused: its totals would include the admin key\'s spend', () => {
    const config = local("http://127.0.0.1:8080/v1") as { keys: { id: string; team: string }[] };
    expect(() => resolveConfig(config, {})).not.toThrow();
    config.keys[0]!.team = "(admin)";
    expect(() => resolveConfig(config, {})).toThrow(/keys\[0\]\.team: "\(admin\)" is the admin key's team in cost records; choose another team/);
    config.keys[0]!.team = "admin"; // a tenant's own team called "admin" is fine
    config.keys[0]!.id = "(admin)";
    expect(() => resolveConfig(config, {})).toThrow(/keys\[0\]\.id: "\(admin\)" is the admin key's name in cost records; choose another id/);
  });
});

describe("a baseUrl with a user and password in it", () => {
  it("is refused at start-up, without quoting the password: the key goes in apiKey", () => {
    const attempt = () => resolveConfig(local("http://svc-user:Sup3rS3cret@127.0.0.1:8080/v1"), {});
    expect(attempt).toThrow(/providers\.local\.baseUrl: no user or password in the URL: give the provider's key as "apiKey": \{"env": "NAME"\}/);
    expect(() => attempt()).not.toThrow(/Sup3rS3cret/);
  });
});

describe("serviceTier on a provider other than OpenAI", () => {
  it("is refused, naming where it belongs", () => {
    const config = { providers: { claude: { type: "anthropic", apiKey: { env: "K" }, serviceTier: "default" } }, routes: {} };
    expect(() => resolveConfig(config, { K: "sk-test" })).toThrow(/providers\.claude\.serviceTier: only for openai providers/);
    const scale = { providers: { openai: { type: "openai", apiKey: { env: "K" }, serviceTier: "scale" } }, routes: {} };
    expect(() => resolveConfig(scale, { K: "sk-test" })).toThrow(/providers\.openai\.serviceTier: write "default" or "priority"/);
  });
});

describe('serviceTier "priority" on a provider whose routed model tollgate has no priority price for', () => {
  it("starts with a warning naming the model and the fix; a listed model gives none", () => {
    const config = {
      providers: { openai: { type: "openai", apiKey: { env: "K" }, serviceTier: "priority", pricing: { models: { "gpt-4.1": { inputPerMillion: 1.5, outputPerMillion: 6 } } } } },
      routes: { negotiated: { targets: [{ provider: "openai", model: "gpt-4.1" }] }, listed: { targets: [{ provider: "openai", model: "gpt-4o" }] } },
    };
    const { warnings } = resolveConfig(config, { K: "sk-test" });
    expect(warnings).toEqual([
      'providers.openai.serviceTier is "priority", but tollgate has no priority price for gpt-4.1 (it is priced in config): its calls are recorded and reserved at the standard price, below what OpenAI bills; price gpt-4.1 in config at the priority rates, or write "serviceTier": "default"',
    ]);
  });
});

describe("imageUrls on a cloud provider", () => {
  it("is refused: only a local decoder fetches image URLs from inside the network", () => {
    const config = { ...local("http://127.0.0.1:8080/v1"), providers: { openai: { type: "openai", apiKey: { env: "K" }, imageUrls: "pass" } }, routes: {} };
    expect(() => resolveConfig(config, { K: "sk-test" })).toThrow(/providers\.openai\.imageUrls: only for openai-compatible providers/);
  });
});

describe("maxRetries on a local decoder", () => {
  it("is refused: only the OpenAI and Anthropic SDKs retry, so it would be ignored (was: accepted, and never retried)", () => {
    const withRetries = (type: string) => ({ ...local("http://127.0.0.1:8080/v1"), providers: { p: { type, baseUrl: "http://127.0.0.1:8080/v1", apiKey: { env: "K" }, maxRetries: 2 } }, routes: {} });
    expect(() => resolveConfig(withRetries("openai-compatible"), { K: "x" })).toThrow(/providers\.p\.maxRetries: only for openai and anthropic providers/);
    expect(() => resolveConfig(withRetries("openai"), { K: "sk-test" })).not.toThrow();
  });
});

describe("store.keyPrefix", () => {
  it("with a brace is refused at start-up: Redis Cluster would place keys by it and split tollgate's own tags", () => {
    const withPrefix = (keyPrefix: string) => ({ ...local("http://127.0.0.1:8080/v1"), store: { redisUrl: { env: "REDIS_URL" }, keyPrefix } });
    expect(() => resolveConfig(withPrefix("acme-prod:"), { REDIS_URL: "redis://127.0.0.1:6379" })).not.toThrow();
    expect(() => resolveConfig(withPrefix("app{}:"), {})).toThrow(/store\.keyPrefix: a key prefix may not contain \{ or \}.*use e\.g\. "acme-prod:"/);
    expect(() => resolveConfig(withPrefix("{tenant}:"), {})).toThrow(ConfigError);
  });
});

describe("a store.redisUrl variable that is not set", () => {
  // An instance whose deployment misspelled the variable ran on the embedded store with a
  // warning: its budgets held in its own memory, and several such instances spent past every limit.
  const withRedis = (store: object) => ({ ...local("http://127.0.0.1:8080/v1"), store: { redisUrl: { env: "REDIS_URL" }, ...store } });

  it("stops start-up, naming the variable and the way to run without it", () => {
    expect(() => resolveConfig(withRedis({}), {})).toThrow(/store\.redisUrl: environment variable REDIS_URL is not set; set it, or add "optional": true to "store"/);
  });

  it('with "optional": true (as the bundled example), leaves the records in the embedded store, with a warning', () => {
    const resolved = resolveConfig(withRedis({ optional: true }), {});
    expect(resolved.redisUrl).toBeUndefined();
    expect(resolved.warnings).toContain("store.redisUrl: REDIS_URL is not set; using the embedded store");
  });

  it("set: Redis it is", () => {
    expect(resolveConfig(withRedis({}), { REDIS_URL: "redis://127.0.0.1:6379" }).redisUrl).toBe("redis://127.0.0.1:6379");
  });
});

// A team budget under a misspelt team name was accepted and never applied: the team it was meant
// for spent without a limit (found by review).
describe("a teams entry that no key belongs to", () => {
  it("is refused, naming the keys' teams", () => {
    const config = {
      providers: { openai: { type: "openai", apiKey: { env: "K" } } },
      routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] } },
      keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
      teams: { serach: { budget: { usd: 5, window: "day", mode: "hard" } } },
    };
    expect(() => resolveConfig(config, { K: "sk-test" })).toThrow(
      /teams\.serach: no key belongs to team "serach", so nothing it sets applies; the keys' teams are "search": fix the name, or remove the entry/,
    );
    expect(() => resolveConfig({ ...config, teams: { search: config.teams.serach } }, { K: "sk-test" })).not.toThrow();
  });
});

// A negotiated price under a misspelt model name left the routed model at the bundled price,
// with nothing said (found by review).
describe("a config price for a model no route sends to the provider", () => {
  it("starts with a warning naming the entry and the routed models; a dated snapshot of a routed model gives none", () => {
    const config = {
      providers: {
        openai: {
          type: "openai",
          apiKey: { env: "K" },
          pricing: { models: { gpt4o: { inputPerMillion: 2, outputPerMillion: 8 }, "gpt-4.1-2025-04-14": { inputPerMillion: 1.5, outputPerMillion: 6 } } },
        },
      },
      routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] }, four: { targets: [{ provider: "openai", model: "gpt-4.1" }] } },
    };
    expect(resolveConfig(config, { K: "sk-test" }).warnings).toEqual([
      'providers.openai.pricing.models["gpt4o"] prices a model no route sends to openai (its routes send "gpt-4o", "gpt-4.1"): check the name, or remove the entry',
    ]);
  });

  // claude-sonnet-4-0 is an alias of claude-sonnet-4, which answers as claude-sonnet-4-20250514:
  // a price under that name is the one the meter finds (found by review of the warning).
  it("gives none for a price under the dated name of a model a route sends by its alias", () => {
    const config = {
      providers: { anthropic: { type: "anthropic", apiKey: { env: "K" }, pricing: { models: { "claude-sonnet-4-20250514": { inputPerMillion: 2, outputPerMillion: 10 } } } } },
      routes: { sonnet: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-0" }] } },
    };
    expect(resolveConfig(config, { K: "sk-test" }).warnings.filter((warning) => warning.includes("no route sends"))).toEqual([]);
  });
});
