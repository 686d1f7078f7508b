import { GatewayError } from "../../src/errors/gateway-error.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";
import type { Usage } from "../../src/model/usage.ts";
import { isNetworkFailure, mapProviderError, type ProviderErrorContext } from "./map-provider-error.ts";
import { redactSecrets } from "./redact-secrets.ts";
import { EventTooLongError } from "./event-bound.ts";

/**
 * Whether an adapter's stream said why the answer stopped (Chat Completions' `finish_reason`,
 * Messages' `stop_reason`) or failed. A connection cut by the provider or a proxy ends the
 * official SDKs' iteration cleanly, without a throw, and a finish reason that says the answer was
 * cut short (vLLM's "abort") is no finish part; passed on as it is, a truncated answer would
 * reach the client, the ledger and the response cache as a complete one. Each adapter loops over
 * its parts itself (a wrapping generator would cost a layer of awaits per part) and asks at the end.
 */
export class FinishCheck {
  private begun = false;
  /** The provider said why the answer stopped. */
  private finished = false;
  private ended = false;

  constructor(private readonly providerName: string) {}

  see(part: StreamPart): void {
    this.begun = true;
    if (part.type === "finish") this.finished = true;
    if (part.type === "finish" || part.type === "error") this.ended = true;
  }

  /**
   * What a throw out of the stream's body becomes, as the same stream closed cleanly at that point
   * would be. A connection lost after the provider began to answer (a reset, a body cut mid-read)
   * is a call the provider took, billed (`missing`); mapped as "could not reach", it had been
   * billed at $0. Lost after the provider said why the answer stopped (before OpenAI's usage
   * chunk, or Anthropic's message_stop), the answer is whole: nothing (was: an error after it).
   * Stopped on purpose (the client left, or a deadline: call-deadlines.ts says which), nothing
   * either: not only an AbortError, since workerd rejects an aborted fetch with the abort's reason.
   */
  failure(error: unknown, context: ProviderErrorContext, signal: AbortSignal): GatewayError | undefined {
    if (signal.aborted) return undefined;
    const mapped = mapProviderError(error, context);
    // An event past the bound (event-bound.ts) cuts the stream where a lost connection would:
    // billed once the answer began, and nothing once the provider had said why it stopped.
    if (mapped instanceof EventTooLongError && this.begun) {
      if (this.finished) return undefined;
      mapped.billed ??= {};
      return mapped;
    }
    if (!this.begun || mapped.billed || !isNetworkFailure(error)) return mapped;
    if (this.finished) return undefined;
    if (this.ended) return mapped;
    return connectionLost(this.providerName, error, context);
  }

  /** The error part a stream that just stopped ends with; none when it ended, or the client left. */
  missing(signal: AbortSignal): StreamPart | undefined {
    if (this.ended || signal.aborted) return undefined;
    if (!this.begun) return { type: "error", error: closedWithoutAnswering(this.providerName) };
    return { type: "error", error: unfinishedAnswer(this.providerName) };
  }
}

/**
 * A stream that closed before its first event (a 200 with an empty body, from a proxy or a load
 * balancer that lost the provider): nothing says the provider read the prompt, so it is not
 * billed, as a reset before the first event and an empty answer not streamed are not. Was billed
 * the prompt as counted, and charged again on top of the target the route fell back to.
 * Retryable: the route may try its next target.
 */
function closedWithoutAnswering(providerName: string): GatewayError {
  return new GatewayError("upstream", `provider "${providerName}" closed the stream without answering`, { retryable: true });
}

/**
 * A call whose connection was lost after the provider began to answer (its stream's first event,
 * or an answer's headers): the provider took it, and bills it (`billed`: the prompt as counted,
 * and what came of the answer). Retryable: before the client got anything, the route may go on.
 */
export function connectionLost(providerName: string, error: unknown, context: ProviderErrorContext): GatewayError {
  const reason = redactSecrets((error as Error)?.message ?? "connection lost", context.apiKey);
  return new GatewayError("upstream", `provider "${providerName}" lost the connection before the answer was complete (${reason})`, { retryable: true, billed: {}, cause: error });
}

/**
 * A transport that reads an answer whole before handing it to an SDK (src/node/undici-fetch.ts)
 * says with this that the connection was lost after the headers, not before: the answer's body
 * reads fail with it.
 */
export class AnswerCutError extends Error {
  override readonly name = "AnswerCutError";
  constructor(cause: unknown) {
    super(`the answer's body was cut off after its headers (${(cause as Error)?.message ?? String(cause)})`, { cause });
  }
}

/**
 * What an answer not streamed that failed becomes: a connection lost after its headers (marked by
 * the transport, see AnswerCutError) is billed; anything else is mapped as it is.
 */
export function answerFailure(error: unknown, signal: AbortSignal, providerName: string, context: ProviderErrorContext): GatewayError {
  if (!signal.aborted && cutAfterHeaders(error)) return connectionLost(providerName, error, context);
  return mapProviderError(error, context);
}

/** Whether an AnswerCutError is the error or among its causes (the SDKs wrap what fetch threw). */
export function cutAfterHeaders(error: unknown): boolean {
  let at: unknown = error;
  for (let depth = 0; at instanceof Error && depth < 4; depth++) {
    if (at instanceof AnswerCutError) return true;
    at = at.cause;
  }
  return false;
}

/**
 * An answer's JSON body, read once its headers are in. Lost meanwhile (a reset, a proxy dropping
 * the socket), the provider had taken the call and run it: billed (`connectionLost`), as a stream
 * cut after it began is. Was: "could not reach provider", at $0.
 */
export async function readAnswerBody<T>(response: { json(): Promise<unknown> }, signal: AbortSignal, providerName: string, context: ProviderErrorContext): Promise<T> {
  try {
    return (await response.json()) as T;
  } catch (error) {
    // Stopped on purpose meanwhile (a deadline, the client): marked as begun, so that the
    // deadline's error bills the call the provider had taken (call-deadlines.ts).
    if (signal.aborted) throw error instanceof AnswerCutError ? error : new AnswerCutError(error);
    throw error instanceof AnswerCutError || isNetworkFailure(error) ? connectionLost(providerName, error, context) : error;
  }
}

/**
 * A provider stopped short of a whole answer. Retryable: when nothing came at all, the route may
 * still try its next target. Billed: the provider had taken the call (`usage`, where it said).
 */
export function unfinishedAnswer(providerName: string, usage?: Usage): GatewayError {
  return new GatewayError("upstream", `provider "${providerName}" stopped before the answer was complete`, { retryable: true, billed: usage ? { usage } : {} });
}
