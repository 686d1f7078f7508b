import { GatewayError } from "../../src/errors/gateway-error.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";

/**
 * An adapter's stream parts, and an error part when the upstream body ended without saying why
 * the answer stopped (Chat Completions' `finish_reason`, Messages' `stop_reason`). A connection
 * cut by the provider or a proxy ends the official SDKs' iteration cleanly, without a throw; passed
 * on as it is, a truncated answer would reach the client, the ledger and the response cache as a
 * complete one. Retryable: when nothing came at all, the route may still try its next target.
 */
export async function* untilFinished(parts: AsyncIterable<StreamPart>, signal: AbortSignal, providerName: string): AsyncGenerator<StreamPart> {
  let ended = false;
  for await (const part of parts) {
    if (part.type === "finish" || part.type === "error") ended = true;
    yield part;
  }
  // A stream the client aborted ends early on purpose.
  if (!ended && !signal.aborted) {
    yield { type: "error", error: new GatewayError("upstream", `provider "${providerName}" ended the stream before the answer was complete`, { retryable: true }) };
  }
}
