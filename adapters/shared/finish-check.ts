import { GatewayError } from "../../src/errors/gateway-error.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";
import type { Usage } from "../../src/model/usage.ts";

/**
 * Whether an adapter's stream said why the answer stopped (Chat Completions' `finish_reason`,
 * Messages' `stop_reason`) or failed. A connection cut by the provider or a proxy ends the
 * official SDKs' iteration cleanly, without a throw, and a finish reason that says the answer was
 * cut short (vLLM's "abort") is no finish part; passed on as it is, a truncated answer would
 * reach the client, the ledger and the response cache as a complete one. Each adapter loops over
 * its parts itself (a wrapping generator would cost a layer of awaits per part) and asks at the end.
 */
export class FinishCheck {
  private ended = false;

  constructor(private readonly providerName: string) {}

  see(part: StreamPart): void {
    if (part.type === "finish" || part.type === "error") this.ended = true;
  }

  /** The error part a stream that just stopped ends with; none when it ended, or the client left. */
  missing(signal: AbortSignal): StreamPart | undefined {
    if (this.ended || signal.aborted) return undefined;
    return { type: "error", error: unfinishedAnswer(this.providerName) };
  }
}

/**
 * A provider stopped short of a whole answer. Retryable: when nothing came at all, the route may
 * still try its next target. Billed: the provider had taken the call (`usage`, where it said).
 */
export function unfinishedAnswer(providerName: string, usage?: Usage): GatewayError {
  return new GatewayError("upstream", `provider "${providerName}" stopped before the answer was complete`, { retryable: true, billed: usage ? { usage } : {} });
}
