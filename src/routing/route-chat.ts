import type { RouteConfig } from "../config/config-schema.ts";
import { GatewayError, toGatewayError, type BilledCall } from "../errors/gateway-error.ts";
import type { ChatModel, UpstreamHeaders } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import { isPreamble, type StreamPart } from "../model/stream-part.ts";
import { mergeUsage, type Usage } from "../model/usage.ts";
import type { ProviderSlot } from "./create-chat-models.ts";

// The fallback strategy: try the route's targets in order and move on only when a target fails
// in a way another could make good, before anything reached the client. Such a failure is marked
// `retryable` where provider errors are mapped (adapters/shared/map-provider-error.ts): a rate
// limit, a 5xx, a timeout, a lost connection or a body that is not JSON, and also what is wrong
// with that target alone: a 401/403 for tollgate's own credentials, a 402 or insufficient_quota of
// its account, a 404 for a model or path it lacks, a decoder started without tool calling, input
// its model cannot read. A target whose per-target step refuses the request (a 400) is skipped
// too, unless the refusal is a route rule's (see Failures). A stream is committed once its first
// part of the answer arrives (see streamOnRoute); after that, a failure is the client's to see.

export type Target = { model: ChatModel; modelName: string };

/**
 * Hears of every upstream call the router makes: metering bills the last, and each earlier one
 * the provider billed (see mayTryNext); telemetry spans each.
 */
export interface RouteObserver {
  /**
   * `request`: what this target is sent, after the per-target policies. Returns the headers the
   * call is to carry (the trace context of telemetry's span for it), if any.
   */
  attemptStarted(target: Target, request: ChatRequest, startedAt: number): UpstreamHeaders | undefined;
  /** A stream's first part of any kind arrived (the conventions' "first chunk"). */
  firstChunk?(at: number): void;
  /**
   * The call failed before anything reached the client; the router moves on or gives up.
   * `clientLeft`: it failed because the client went away, not because the provider refused.
   */
  attemptFailed(target: Target, error: GatewayError, clientLeft: boolean): void;
  /**
   * The per-target step refused the request for `target` (a 400: a policy, or the provider's own
   * check): the route moves on without calling it, and does not come back to it.
   */
  targetRefused?(target: Target): void;
  /**
   * After a failure, before the next target: false stops the route there with that failure
   * (metering, when a hard budget cannot also pay for a failed call the provider billed).
   */
  mayTryNext?(): Promise<boolean>;
}

const NO_OBSERVER: RouteObserver = { attemptStarted: () => undefined, attemptFailed() {} };

/** Shapes the request for one target (the policies' per-target step); may throw a 400. */
export type AdaptToTarget = (request: ChatRequest, target: Target) => Promise<ChatRequest>;
const AS_IS: AdaptToTarget = async (request) => request;

export type RoutedResponse = { target: Target; response: ChatResponse };
/** `held`: the parts read before the stream was committed (its preamble and the answer's first part), then `rest`. */
export type RoutedStream = { target: Target; held: StreamPart[]; rest: AsyncGenerator<StreamPart> };

export async function generateOnRoute(
  request: ChatRequest,
  route: RouteConfig,
  slots: Map<string, ProviderSlot>,
  signal: AbortSignal,
  observer: RouteObserver = NO_OBSERVER,
  adapt: AdaptToTarget = AS_IS,
): Promise<RoutedResponse> {
  const { target, answer } = await tryTargets(request, route, slots, signal, observer, adapt, async (adapted, target, headers): Promise<Attempt<ChatResponse>> => {
    try {
      return { answer: await target.model.generate(adapted, target.modelName, signal, headers) };
    } catch (error) {
      return { failure: toGatewayError(error) };
    }
  });
  return { target, response: answer };
}

/**
 * `commitAfterMs`: how long a stream that has begun (its first chunk is in) may stay without an
 * answer part before it is committed anyway, so that the client gets its status line and
 * keep-alives while a model reasons before its first token; a load balancer would otherwise cut
 * the silent connection. The price: a failure after that reaches the client in the stream
 * instead of falling back.
 */
export async function streamOnRoute(
  request: ChatRequest,
  route: RouteConfig,
  slots: Map<string, ProviderSlot>,
  signal: AbortSignal,
  observer: RouteObserver = NO_OBSERVER,
  adapt: AdaptToTarget = AS_IS,
  commitAfterMs = 0,
): Promise<RoutedStream> {
  const { target, answer } = await tryTargets(request, route, slots, signal, observer, adapt, async (adapted, target, headers): Promise<Attempt<Pick<RoutedStream, "held" | "rest">>> => {
    // A stream is committed once its first part of the answer arrives; a failure before that may
    // fall back. The parts a provider sends before any answer (Anthropic's message_start with its
    // usage, OpenAI's role chunk) commit nothing: an overloaded_error right after them is still a
    // failure the next target can make good.
    const parts = target.model.stream(adapted, target.modelName, signal, headers);
    const preamble: StreamPart[] = [];
    for (;;) {
      const pending = parts.next();
      const next = preamble.length > 0 && commitAfterMs > 0 ? await within(pending, commitAfterMs) : await pending;
      if (next === SILENT) {
        void pending.catch(() => undefined); // read by `resume`; never an unhandled rejection if it is not
        return { answer: { held: preamble, rest: resume(pending, parts) } };
      }
      if (next.done) {
        const failure = new GatewayError("upstream", `provider "${target.model.providerName}" closed the stream without answering`, { retryable: true });
        // It had read the prompt: billed, with what its preamble reported.
        return { failure: withPreambleUsage(failure, preamble) };
      }
      if (next.value.type === "error") {
        void parts.return(undefined).catch(() => undefined); // let the adapter's stream end
        const failure = next.value.error;
        // An error event is a refusal, not billed, unless the adapter says the call was (or the client left).
        return { failure: failure.billed || signal.aborted ? withPreambleUsage(failure, preamble) : failure };
      }
      if (preamble.length === 0) observer.firstChunk?.(performance.now());
      preamble.push(next.value);
      if (!isPreamble(next.value)) break;
    }
    return { answer: { held: preamble, rest: parts } };
  });
  return { target, ...answer };
}

/**
 * Any other call along a route (a token count): the same targets in the same order, the same
 * per-target refusals, and on a failure another target could make good, the next target. Nothing
 * is observed: such a call is neither billed nor metered.
 */
export async function callOnRoute<T>(
  request: ChatRequest,
  route: RouteConfig,
  slots: Map<string, ProviderSlot>,
  signal: AbortSignal,
  adapt: AdaptToTarget,
  call: (adapted: ChatRequest, target: Target) => Promise<T>,
): Promise<{ target: Target; answer: T }> {
  const { target, answer } = await tryTargets(request, route, slots, signal, NO_OBSERVER, adapt, async (adapted, target): Promise<Attempt<T>> => {
    try {
      return { answer: await call(adapted, target) };
    } catch (error) {
      return { failure: toGatewayError(error) };
    }
  });
  return { target, answer };
}

/**
 * A billed call is billed with the usage its preamble reported (Anthropic's message_start, with
 * its cache reads), not with tollgate's count of the prompt, and at the price of what its opening
 * said: where inference ran and the tier that served it. Was: the global, standard price.
 */
function withPreambleUsage(failure: GatewayError, preamble: readonly StreamPart[]): GatewayError {
  let usage: Usage | undefined;
  let answeredAs: BilledCall["answeredAs"];
  for (const part of preamble) {
    if (part.type === "usage") usage = mergeUsage(usage, part.usage);
    else if (part.type === "start") answeredAs = { model: part.model, inferenceGeo: part.inferenceGeo, serviceTier: part.serviceTier };
  }
  // Billed where the adapter says so or the preamble reported usage (as before); the opening then says at what price.
  if (!failure.billed && !usage) return failure;
  const billed: BilledCall = { ...failure.billed };
  if (!billed.usage && usage) billed.usage = usage;
  if (!billed.answeredAs && answeredAs) billed.answeredAs = answeredAs;
  failure.billed = billed;
  return failure;
}

const SILENT = Symbol("silent");

/** The next part, or SILENT if none came within `ms` (the part may still come: see `resume`). */
async function within<T>(pending: Promise<T>, ms: number): Promise<T | typeof SILENT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silence = new Promise<typeof SILENT>((resolve) => (timer = setTimeout(() => resolve(SILENT), ms)));
  try {
    return await Promise.race([pending, silence]);
  } finally {
    clearTimeout(timer);
  }
}

/** The rest of a stream committed while a part was still on its way: that part, then the others. */
async function* resume(pending: Promise<IteratorResult<StreamPart>>, parts: AsyncGenerator<StreamPart>): AsyncGenerator<StreamPart> {
  try {
    const next = await pending;
    if (next.done) return;
    yield next.value;
    yield* parts;
  } finally {
    // Given up before `yield*` took over (the client left right after that first part): the
    // adapter's stream must still end, or its deadline clock and its finally blocks never run.
    void parts.return(undefined).catch(() => undefined);
  }
}

type Attempt<T> = { answer: T } | { failure: GatewayError };

/** The fallback loop both forms share: each usable target in turn, until one answers. */
async function tryTargets<T>(
  request: ChatRequest,
  route: RouteConfig,
  slots: Map<string, ProviderSlot>,
  signal: AbortSignal,
  observer: RouteObserver,
  adapt: AdaptToTarget,
  attempt: (adapted: ChatRequest, target: Target, headers: UpstreamHeaders | undefined) => Promise<Attempt<T>>,
): Promise<{ target: Target; answer: T }> {
  const failures = new Failures();
  for (const target of usableTargets(route, slots)) {
    if (signal.aborted) break;
    if (failures.told && observer.mayTryNext && !(await observer.mayTryNext())) throw failures.final(route, slots, signal);
    const adapted = await failures.adapt(adapt, request, target);
    if (!adapted) {
      observer.targetRefused?.(target);
      continue;
    }
    // The client may have left while the above waited (a budget store, a policy's store): a call
    // begun now would be billed for a prompt nobody sent.
    if (signal.aborted) break;
    const headers = observer.attemptStarted(target, adapted, performance.now());
    const result = await attempt(adapted, target, headers);
    if ("answer" in result) return { target, answer: result.answer };
    observer.attemptFailed(target, result.failure, signal.aborted);
    // A client that left is not a reason to call the next provider.
    if (!result.failure.retryable || signal.aborted) throw result.failure;
    failures.failed(result.failure, target.modelName);
  }
  throw failures.final(route, slots, signal);
}

/**
 * Why a route found no answer. A target that cannot take the request (a 400 at its per-target
 * step: logprobs on Claude, an image type it refuses) is skipped: the next may take it, and the
 * record says so (perTargetStep). A refusal by the route's own rule (`"onUnsupported": "reject"`)
 * is the client's answer when no target has been called yet: the route asked for the 400, and
 * moving on would send every such request to the fallback model unseen. After a provider's
 * failure it is a skip like the others, and that failure, what the client most needs to know,
 * outranks every refusal.
 */
class Failures {
  /**
   * The provider's failure the client is told of: the last, except that of several rate limits
   * it is the one that lifts first (its retry-after is when some target may answer again), and
   * that a passing failure outranks a lasting one (a 429 with its retry-after, not the next
   * target's 404 for a model it does not have: a retry can meet the first again, never the
   * second). Undefined until a provider was called and failed.
   */
  told: GatewayError | undefined;
  /** The first per-target refusal (a 400 at the per-target step): the answer if no provider was called. */
  private refusal: GatewayError | undefined;
  /** Some target failed in a way a later retry of the request may not meet again. */
  private transient = false;
  /** Every target's failure, in the order tried. */
  private readonly tried: { failure: GatewayError; model: string }[] = [];

  /** A provider's call failed in a way the next target may make good: kept, and perhaps told. */
  failed(failure: GatewayError, model: string): void {
    this.tried.push({ failure, model });
    const kept = this.told;
    const sooner = kept?.kind === "rate_limit" && failure.kind === "rate_limit" && (kept.retryAfterSeconds ?? Infinity) < (failure.retryAfterSeconds ?? Infinity);
    const passingKept = kept !== undefined && !kept.permanent && failure.permanent === true;
    if (!failure.permanent) this.transient = true;
    if (!sooner && !passingKept) this.told = failure;
  }

  /** The per-target step for `target`: the request it is to get, or undefined where it is skipped. */
  async adapt(adapt: AdaptToTarget, request: ChatRequest, target: Target): Promise<ChatRequest | undefined> {
    try {
      return await adapt(request, target);
    } catch (error) {
      const refusal = toGatewayError(error);
      if (refusal.status !== 400 || (refusal.routeRule && !this.told)) throw refusal;
      this.refusal ??= refusal;
      return undefined;
    }
  }

  /** What the client is told when the route gives up. */
  final(route: RouteConfig, slots: Map<string, ProviderSlot>, signal: AbortSignal): GatewayError {
    if (signal.aborted) return new GatewayError("upstream", "the client went away before an answer", { code: "client_closed_request" });
    const told = this.told;
    if (!told) return this.refusal ?? noTargetError(route, slots);
    // The client is told of one failure; the route's others (a provider without its key is
    // never tried) are named beside it, or only the last target would show in the message.
    const others = [
      ...new Set([...this.tried.filter(({ failure }) => failure !== told).map(({ failure, model }) => `${model}: ${failure.message}`), ...unavailableReasons(route, slots)]),
    ];
    // "Do not retry" holds only where every target failed for good.
    const permanent = told.permanent && !this.transient;
    if (others.length === 0 && permanent === told.permanent) return told;
    // The log gets every target's own detail (a decoder's address), which no client is told.
    const details = this.tried.flatMap(({ failure, model }) => (failure.logDetail ? [`${model}: ${failure.logDetail}`] : []));
    return restated(told, others.length > 0 ? `${told.message} (the route's other targets: ${others.join("; ")})` : told.message, permanent, details.join("; "));
  }
}

function* usableTargets(route: RouteConfig, slots: Map<string, ProviderSlot>): Generator<Target> {
  for (const target of route.targets) {
    const slot = slots.get(target.provider);
    if (slot && "model" in slot) yield { model: slot.model, modelName: target.model };
  }
}

/** The same failure, told with `message`, and with or without the claim that no retry can help. */
function restated(failure: GatewayError, message: string, permanent: boolean, logDetail: string): GatewayError {
  const { kind, param, code, retryAfterSeconds, rateLimitUnit, billed, details } = failure;
  return new GatewayError(kind, message, { param, code, retryAfterSeconds, rateLimitUnit, retryable: failure.retryable, permanent, billed, details, ...(logDetail ? { logDetail } : {}), cause: failure.cause });
}

/** Why the route's providers without their keys were not tried. */
function unavailableReasons(route: RouteConfig, slots: Map<string, ProviderSlot>): string[] {
  return [
    ...new Set(
      route.targets.flatMap((target) => {
        const slot = slots.get(target.provider);
        return slot && "unavailable" in slot ? [slot.unavailable] : [];
      }),
    ),
  ];
}

/** Every target is an optional provider without its key: say which variable to set. */
function noTargetError(route: RouteConfig, slots: Map<string, ProviderSlot>): GatewayError {
  const reasons = unavailableReasons(route, slots);
  return new GatewayError("unavailable", reasons.join("; ") || "no provider of this route is available", { code: "provider_unavailable", permanent: true });
}
