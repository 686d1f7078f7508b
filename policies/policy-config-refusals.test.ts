import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../src/config/resolve-config.ts";
import { sha256 } from "../test/support/gateway.ts";

// A policy config that would do nothing, or not what it says, is refused at start-up with the path
// and the fix. Was: each of these validated, and the route ran as if the option were not there.

function withPolicies(policies: object) {
  return {
    providers: { local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:8080/v1" } },
    routes: { chat: { targets: [{ provider: "local", model: "m" }], policies } },
    keys: [{ id: "a", team: "t", hash: sha256("tg_review_key_0123456789") }],
  };
}
const starts = (policies: object) => () => resolveConfig(withPolicies(policies), {});

describe("policy options that would be ignored", () => {
  it('format {"type": "text"} without an instruction (it sends no line at all)', () => {
    expect(starts({ format: { type: "text" } })).toThrow(ConfigError);
    expect(starts({ format: { type: "text" } })).toThrow('routes.chat.policies.format.instruction: type "text" needs an instruction');
    expect(starts({ format: { type: "text", instruction: "Answer in Markdown." } })).not.toThrow();
  });

  it('format "prefill": true with "type": "text" ("{" starts a JSON answer only)', () => {
    expect(starts({ format: { type: "text", instruction: "Answer in Markdown.", prefill: true } })).toThrow(
      'routes.chat.policies.format.prefill: prefill starts the answer with "{", for type "json" only: remove prefill, or write type "json"',
    );
    expect(starts({ format: { type: "json", prefill: true } })).not.toThrow();
  });

  it("brevity with both maxSentences and an instruction (the instruction is sent, the number never)", () => {
    expect(starts({ brevity: { maxSentences: 3, instruction: "Answer in one line." } })).toThrow(
      "routes.chat.policies.brevity.maxSentences: give maxSentences or an instruction, not both",
    );
    expect(starts({ brevity: { instruction: "Answer in one line." } })).not.toThrow();
  });

  it('maxTokens "onExceed": "reject" without a cap (nothing to exceed: no request is refused)', () => {
    expect(starts({ maxTokens: { onExceed: "reject" } })).toThrow("routes.chat.policies.maxTokens.onExceed: onExceed needs a cap: add cap (e.g. 1024), or remove onExceed");
    expect(starts({ maxTokens: { default: 512, onExceed: "reject" } })).toThrow(ConfigError);
    expect(starts({ maxTokens: { cap: 1024, onExceed: "reject" } })).not.toThrow();
  });
});
