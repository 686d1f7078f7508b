import { GatewayError } from "../../errors/gateway-error.ts";

// The `anthropic-beta` header turns on features of the Messages API by name, several separated
// by commas (the SDK joins its `betas` that way): `context-1m-2025-08-07` opens Sonnet's 1M-token
// window, `interleaved-thinking-2025-05-14` lets Claude think between tool calls. A proxy that
// drops the header breaks those requests in ways the client cannot see (a long prompt becomes
// "prompt is too long"), so tollgate carries it to Anthropic targets. Anthropic itself answers an
// unknown name with a 400; only what could not be a name at all is refused here, before any
// budget is reserved.

const BETA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The beta names in the client's `anthropic-beta` header(s), in order and without repeats. */
export function readAnthropicBetas(headers: Headers): string[] | undefined {
  const value = headers.get("anthropic-beta");
  if (value === null) return undefined;
  const names = [...new Set(value.split(",").map((name) => name.trim()).filter((name) => name.length > 0))];
  const bad = names.find((name) => !BETA_NAME.test(name));
  if (bad !== undefined) {
    throw new GatewayError("invalid_request", `anthropic-beta: ${JSON.stringify(bad.slice(0, 80))} is not a beta name; write names like "context-1m-2025-08-07", several separated by commas`, {
      param: "anthropic-beta",
    });
  }
  return names.length > 0 ? names : undefined;
}
