import { describe, expect, it } from "vitest";
import { redactSecrets } from "./redact-secrets.ts";

describe("redactSecrets", () => {
  it("takes out a key of 8 characters or more wherever it is quoted", () => {
    expect(redactSecrets("key hunter22 is not valid", "hunter22")).toBe("key [redacted] is not valid");
  });

  it("leaves a shorter key (a placeholder such as none or EMPTY) where it is no credential, as it is an ordinary word there", () => {
    expect(redactSecrets('tool_choice "none" needs no tools', "none")).toBe('tool_choice "none" needs no tools');
  });

  it("takes out whatever follows Bearer or x-api-key:, whatever the key is", () => {
    expect(redactSecrets("Header 'Authorization: Bearer abc' is malformed", "abc")).toBe("Header 'Authorization: Bearer [redacted]' is malformed");
    expect(redactSecrets("got x-api-key: zz9-secret, expected another", undefined)).toBe("got x-api-key: [redacted], expected another");
  });

  it("leaves the words alone where no credential follows them", () => {
    expect(redactSecrets("x-api-key header is required", "EMPTY")).toBe("x-api-key header is required");
    expect(redactSecrets("ask the bearers", undefined)).toBe("ask the bearers");
  });

  it("takes out masked key-shaped tokens and URL passwords", () => {
    expect(redactSecrets("Incorrect API key provided: sk-proj-ab***wxyz.", "sk-proj-abcdefwxyz")).toBe("Incorrect API key provided: [redacted].");
    expect(redactSecrets("connect to http://user:pw@10.0.0.5:8000 failed")).toBe("connect to http://[redacted]@10.0.0.5:8000 failed");
  });
});

// Only sk-, sk-ant-, sk-proj- and tg_ keys were recognised when quoted in part: a Groq, xAI or
// hex key masked the way OpenAI masks its own reached every tenant's error body (found by review).
describe("a provider key of another shape, quoted in part", () => {
  const key = "gsk_9fQ2mVx7Lr3Tn8WkYc1HbAe5";
  it.each([
    ["masked", "Incorrect API key provided: gsk_9fQ2************bAe5."],
    ["masked to its last four", "key ****************bAe5 was revoked"],
    ["its first 12 characters", "no such key gsk_9fQ2mVx7 on this account"],
  ])("%s: taken out", (_how, message) => {
    const redacted = redactSecrets(message, key);
    expect(redacted).toContain("[redacted]");
    expect(redacted).not.toMatch(/9fQ2|bAe5/);
  });

  it("leaves other words alone", () => {
    expect(redactSecrets("The model `llama-3.1-8b` does not exist", key)).toBe("The model `llama-3.1-8b` does not exist");
  });
});
