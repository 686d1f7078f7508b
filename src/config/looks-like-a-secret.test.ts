import { describe, expect, it } from "vitest";
import { looksLikeASecret } from "./looks-like-a-secret.ts";
import { ConfigError, resolveConfig } from "./resolve-config.ts";

// PRODUCT.md: "Provider keys never reach clients or logs." A key pasted as {"env": "<the key>"}
// passed the name pattern and was printed as the variable's name: in the start-up error, the
// start-up warning, and the 503 every client of an optional provider got.

// Made-up keys in each provider's format.
const GROQ_KEY = "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";
const KEYS = {
  groq: GROQ_KEY,
  mistral: "q8Vd2LmX7tRw0Zp4Kc9Hs1Nb6Yf3Ga5E",
  together: "3f9a6c1e8b2d4f7a0c5e9b1d3f6a8c2e4b7d9f1a3c5e7b9d2f4a6c8e0b1d3f5a",
  cohere: "Xk2pQ8vL4mN7rT1wZ9bC3dF6gH0jK5sY8uE2iO4a",
  stripeStyle: "sk_live_51Hx",
  google: "AIzaSyA1b2C3d4E5f6G7h8I9j0K_lMnOpQrStUv",
  openai: "sk-proj-abc123",
  anthropic: "sk-ant-api03-abc",
  xai: "xai-abc123",
  redisUrl: "redis://:hunter2@10.0.0.1:6379",
};

describe("a value written as a variable's name", () => {
  it.each(Object.entries(KEYS))("%s's key format is taken for a secret", (_provider, key) => {
    expect(looksLikeASecret(key)).toBe(true);
  });

  it.each([
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "openai_key", "openai_api_key_2", "AZURE_OPENAI_API_KEY_EASTUS2",
    "REDIS_URL", "openaiApiKeyForProduction", "OPENAIKEY2024PRODUCTION", "SK_API_KEY", "sk", "MISTRAL_API_KEY_20250101",
    // camelCase names with a digit (Kubernetes envFrom keys, per-region names): were refused as
    // keys, and the operator told to rotate a key that never leaked.
    "azureOpenAiKeyEastus2", "openaiApiKeyGpt4oMini", "anthropicKeyTeam2Prod", "llamaServerToken8080x",
  ])("%s is a name", (name) => {
    expect(looksLikeASecret(name)).toBe(false);
  });
});

describe("a provider key pasted where the variable's name goes", () => {
  const config = (optional: boolean) => ({
    providers: { groq: { type: "openai-compatible", baseUrl: "https://api.groq.com/openai/v1", apiKey: { env: GROQ_KEY }, optional } },
    routes: { fast: { targets: [{ provider: "groq", model: "llama-3.1-8b-instant" }] } },
  });
  const refusal = (raw: unknown) => {
    try {
      resolveConfig(raw, {});
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    throw new Error("config was accepted");
  };

  it("stops start-up saying to write the name there, without repeating the key", () => {
    for (const optional of [false, true]) {
      const message = refusal(config(optional));
      expect(message).toContain('providers.groq.apiKey.env: this looks like the secret itself, not a variable\'s name: write the name of the environment variable that holds it (such as "OPENAI_API_KEY")');
      expect(message).not.toContain(GROQ_KEY);
      // Before, an optional provider started, and its warning and 503 said "set gsk_… and restart".
      expect(message).not.toContain("restart");
    }
  });

  it("a URL in store.redisUrl's env is refused the same way", () => {
    const message = refusal({ ...config(false), store: { redisUrl: { env: KEYS.redisUrl } } });
    expect(message).toContain("store.redisUrl.env: this looks like the secret itself");
    expect(message).not.toContain("hunter2");
  });

  it("a lower-case variable name still works", () => {
    const raw = config(true);
    raw.providers.groq.apiKey.env = "groq_key";
    expect(resolveConfig(raw, { groq_key: GROQ_KEY }).providers.groq!.apiKeyValue).toBe(GROQ_KEY);
  });
});
