import { context, INVALID_SPAN_CONTEXT, isSpanContextValid, metrics, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, ValueType, type Attributes, type Span, type TextMapGetter } from "@opentelemetry/api";
import type { CostRecord } from "../metering/cost-record.ts";
import type { AssistantContent, ChatRequest } from "../model/chat-request.ts";
import { totalInputTokens } from "../model/usage.ts";
import {
  chatInputMessagesAttributes,
  chatOutputMessagesAttributes,
  chatRequestAttributes,
  chatResponseAttributes,
  chatSpanName,
  countTokensRequestAttributes,
  countTokensSpanName,
  genAiProviderName,
  type ChatResponseFacts,
  type ChatTarget,
  type ProviderType,
} from "./gen-ai-attributes.ts";

// Spans and metrics for the request path, written against @opentelemetry/api only. Until an SDK is
// registered (src/node/setup-telemetry.ts, or an embedding application's own), every call below
// lands on the API's no-op tracer and meter, so the gateway pays for little more than the
// attribute maps. The tracer and meter are taken once, here: create this object AFTER the SDK is
// registered, because the metrics API has no proxy that would pick up a later registration.

// Explicit bucket boundaries the convention gives (semconv v1.41); the SDK's default buckets
// would put almost every token count in the overflow bucket.
const TOKEN_USAGE_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
const DURATION_SECONDS_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

const NANO_PER_USD = 1e9;

export type GatewayTelemetryOptions = {
  /** Put prompts and answers on chat spans (gen_ai.input/output.messages). Off by default. */
  captureContent?: boolean;
  /**
   * False when no OpenTelemetry SDK is registered (the Node entry knows): then every call returns
   * at once, without building attribute maps that the no-op API would only throw away.
   */
  enabled?: boolean;
};

export type ChatOutcome = ChatResponseFacts & {
  error?: { type: string; message: string };
  /** The answer as it was given; read only when content capture is on. */
  output?: AssistantContent[];
  /** Some of `usage` is tollgate's own count, not the provider's (a cut stream, a server without usage). */
  usageEstimated?: boolean;
};

/** What the response cache said of a request it was asked about, as `x-tollgate-cache` says it. */
export type ResponseCacheOutcome = "hit" | "miss";

export type RequestOutcome = {
  httpStatus: number;
  record?: CostRecord;
  /** Set only where the route's response cache was asked (its policy on, the request deterministic). */
  responseCache?: ResponseCacheOutcome;
};

export type MetricsTarget = { providerName: string; providerType: ProviderType };

export type GatewayTelemetry = {
  readonly captureContent: boolean;
  /** `headers`: the request's, from which the registered propagator takes the caller's trace context. */
  startRequestSpan(name: string, attributes: Attributes, headers?: Headers): Span;
  startChatSpan(parent: Span, request: ChatRequest, target: ChatTarget): Span;
  /** A CLIENT span for a provider's own token count (count_tokens); ended with endChatSpan. */
  startCountTokensSpan(parent: Span, target: ChatTarget): Span;
  /**
   * The W3C trace context of a chat span, for the upstream call it describes; undefined when
   * telemetry is off or no propagator is registered. Only the span's own context goes: a
   * client's baggage is never passed on to a provider.
   */
  traceHeaders(span: Span): Record<string, string> | undefined;
  /** Ends a chat or count_tokens span: a count's outcome is its `usage.inputTokens`. */
  endChatSpan(span: Span, outcome: ChatOutcome): void;
  endRequestSpan(span: Span, outcome: RequestOutcome): void;
  /**
   * `operationSeconds`: the answering call's own duration, from its start (not the request's);
   * absent when that call failed and was recorded as it failed. `firstChunkSeconds`: from that
   * call's start to the first part of its stream.
   */
  recordMetrics(record: CostRecord, target: MetricsTarget, timings: { operationSeconds?: number; firstChunkSeconds?: number }): void;
  /** A request the response cache was asked about, with its record: counted, and a hit's savings added. */
  recordResponseCache(record: CostRecord, outcome: ResponseCacheOutcome): void;
  /** A request was served although a soft budget of its scope was exhausted. */
  recordSoftBudgetExceeded(scope: string): void;
  /** An upstream call that failed before the route moved on: its own duration point, with error.type. */
  recordFailedAttempt(target: MetricsTarget & { model: string }, seconds: number, errorType: string): void;
};

/** Reads trace context (traceparent, tracestate, baggage) from a Web-standard Headers. */
const HEADERS_GETTER: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

/** What a disabled telemetry hands out: the API's own non-recording span, shared. */
const NOOP_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export function createGatewayTelemetry(options: GatewayTelemetryOptions = {}): GatewayTelemetry {
  const { captureContent = false, enabled = true } = options;
  const tracer = trace.getTracer("tollgate");
  const meter = metrics.getMeter("tollgate");

  const tokenUsage = meter.createHistogram("gen_ai.client.token.usage", {
    description: "Number of input and output tokens used",
    unit: "{token}",
    advice: { explicitBucketBoundaries: TOKEN_USAGE_BUCKETS },
  });
  const operationDuration = meter.createHistogram("gen_ai.client.operation.duration", {
    description: "GenAI operation duration",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_SECONDS_BUCKETS },
  });
  const timeToFirstChunk = meter.createHistogram("gen_ai.client.operation.time_to_first_chunk", {
    description: "Time to receive the first chunk of a streamed answer",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_SECONDS_BUCKETS },
  });
  const softBudgetExceeded = meter.createCounter("tollgate.budget.soft_exceeded", {
    description: "Requests served although a soft budget of their scope was exhausted",
    unit: "{request}",
  });
  // By route and team only (as the cost counter, less key and model): a hit is a $0 request whose
  // SERVER span and cost point look like any other, so the cache's work shows only here.
  const responseCacheLookups = meter.createCounter("tollgate.response_cache.requests", {
    description: "Requests the response cache was asked about, by whether it answered (tollgate.response_cache: hit or miss)",
    unit: "{request}",
    valueType: ValueType.INT,
  });
  const responseCacheSavings = meter.createCounter("tollgate.response_cache.savings", {
    description: "What response-cache hits saved: what their answers cost when first made, in nano-dollars (1e-9 USD)",
    unit: "{nanodollar}",
    valueType: ValueType.INT,
  });
  // Integer nano-dollars, as the ledger keeps them: a floating-point USD counter summed in the SDK
  // drifts (3 × $0.0000125 exported as 0.000037500000000000003), and finance reconciles to the cent.
  const cost = meter.createCounter("tollgate.cost", {
    description: "Cost of answered requests at the configured prices, in nano-dollars (1e-9 USD)",
    unit: "{nanodollar}",
    valueType: ValueType.INT,
  });

  return {
    captureContent,

    startRequestSpan(name, attributes, headers) {
      if (!enabled) return NOOP_SPAN;
      const parent = headers ? propagation.extract(ROOT_CONTEXT, headers, HEADERS_GETTER) : ROOT_CONTEXT;
      return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    },

    startChatSpan(parent, request, target) {
      if (!enabled) return NOOP_SPAN;
      const attributes = chatRequestAttributes(request, target);
      if (captureContent) Object.assign(attributes, chatInputMessagesAttributes(request.messages));
      const parentContext = trace.setSpan(context.active(), parent);
      return tracer.startSpan(chatSpanName(target.model), { kind: SpanKind.CLIENT, attributes }, parentContext);
    },

    startCountTokensSpan(parent, target) {
      if (!enabled) return NOOP_SPAN;
      const parentContext = trace.setSpan(context.active(), parent);
      return tracer.startSpan(countTokensSpanName(target.model), { kind: SpanKind.CLIENT, attributes: countTokensRequestAttributes(target) }, parentContext);
    },

    traceHeaders(span) {
      // Not isRecording(): a caller that sampled its trace out still has its trace id passed on
      // (W3C Trace Context: a traceparent received is sent on), with the sampled flag off.
      if (!enabled || !isSpanContextValid(span.spanContext())) return undefined;
      const carrier: Record<string, string> = {};
      propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
      return Object.keys(carrier).length > 0 ? carrier : undefined;
    },

    endChatSpan(span, outcome) {
      // A non-recording span (no SDK, or sampled out) would drop these anyway: skip building them.
      if (span.isRecording()) {
        span.setAttributes(chatResponseAttributes(outcome));
        // The gen_ai.usage.* figures are then tollgate's count; the token metric leaves them out.
        if (outcome.usageEstimated) span.setAttribute("tollgate.usage.estimated", true);
        if (captureContent && outcome.output !== undefined) {
          span.setAttributes(chatOutputMessagesAttributes(outcome.output, outcome.finishReason));
        }
        if (outcome.error) {
          span.setAttribute("error.type", outcome.error.type);
          // A provider's error text may quote the request (vLLM's validation errors repeat the
          // input, OpenAI's "Invalid value: '…'" the value sent): only with content capture on.
          span.setStatus({ code: SpanStatusCode.ERROR, message: captureContent ? clip(outcome.error.message) : `the call failed: ${outcome.error.type}` });
        }
      }
      span.end();
    },

    endRequestSpan(span, outcome) {
      if (span.isRecording()) {
        span.setAttribute("http.response.status_code", outcome.httpStatus);
        const record = outcome.record;
        if (record) {
          span.setAttributes({
            "tollgate.route": record.route,
            "tollgate.key_id": record.keyId,
            "tollgate.team": record.team,
            "tollgate.cost_usd": record.cost.totalNano / NANO_PER_USD,
            "tollgate.estimated": record.estimated,
            "tollgate.unpriced": record.unpriced,
          });
        }
        if (outcome.responseCache) span.setAttribute("tollgate.response_cache", outcome.responseCache);
        // HTTP server convention: only 5xx marks the server span failed; a 4xx is the client's.
        if (outcome.httpStatus >= 500) {
          span.setAttribute("error.type", String(outcome.httpStatus));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
    },

    recordFailedAttempt(target, seconds, errorType) {
      if (!enabled) return;
      operationDuration.record(seconds, {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": genAiProviderName(target),
        "gen_ai.request.model": target.model,
        "error.type": errorType,
      });
    },

    recordResponseCache(record, outcome) {
      if (!enabled) return;
      const attributes = { "tollgate.route": record.route, "tollgate.team": record.team };
      responseCacheLookups.add(1, { ...attributes, "tollgate.response_cache": outcome });
      // A miss's cacheSavingsNano is the provider's prompt cache, not this cache.
      if (outcome === "hit") responseCacheSavings.add(record.cost.cacheSavingsNano, attributes);
    },

    recordSoftBudgetExceeded(scope) {
      if (!enabled) return;
      softBudgetExceeded.add(1, { "tollgate.budget.scope": scope });
    },

    recordMetrics(record, target, { operationSeconds, firstChunkSeconds }) {
      if (!enabled) return;
      const providerName = genAiProviderName(target);
      const operationAttributes: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": providerName,
        "gen_ai.request.model": record.model,
      };
      if (record.responseModel !== undefined) operationAttributes["gen_ai.response.model"] = record.responseModel;

      // A provider that failed before answering, or a call the client left before any usage came,
      // reported none; zeros would drag the histogram toward an answer that never happened. Tollgate's own estimate (a stream cut off before
      // its usage) is not reported either: the conventions allow offline counts only where the
      // user enabled them, and the record (flagged `estimated`) and the cost counter carry it.
      // The convention's input count includes cached tokens, as in the span attributes.
      const inputTokens = totalInputTokens(record.usage);
      const anyTokens = inputTokens > 0 || record.usage.outputTokens > 0;
      if (anyTokens && !record.estimated) {
        tokenUsage.record(inputTokens, { ...operationAttributes, "gen_ai.token.type": "input" });
        tokenUsage.record(record.usage.outputTokens, { ...operationAttributes, "gen_ai.token.type": "output" });
      }

      // A call the client cut short ended as cancelled, as a failed attempt the client left does.
      const durationAttributes =
        record.status === "error"
          ? { ...operationAttributes, "error.type": record.errorType ?? "_OTHER" }
          : record.status === "aborted"
            ? { ...operationAttributes, "error.type": "cancelled" }
            : operationAttributes;
      // The operation is the provider call that answered; a failed attempt before it was recorded
      // as its own point, so the request's whole duration would count that time twice.
      if (operationSeconds !== undefined) operationDuration.record(operationSeconds, durationAttributes);

      // The gateway is the provider's client here, so the upstream measurement is the one meant:
      // to the stream's first chunk of any kind (Anthropic's message_start), not its first text.
      if (record.stream && firstChunkSeconds !== undefined) timeToFirstChunk.record(firstChunkSeconds, operationAttributes);

      cost.add(record.cost.totalNano, {
        "tollgate.route": record.route,
        "tollgate.team": record.team,
        "tollgate.key_id": record.keyId,
        "gen_ai.request.model": record.model,
        "gen_ai.provider.name": providerName,
        // Two accounts of one provider type (a batch key beside the main one) are billed apart.
        "tollgate.provider": record.provider,
      });
    },
  };
}

/** The most of a provider's error text a span's status keeps (one error can quote a 100 MB body). */
const STATUS_MESSAGE_LIMIT = 1_000;

function clip(message: string): string {
  return message.length <= STATUS_MESSAGE_LIMIT ? message : `${message.slice(0, STATUS_MESSAGE_LIMIT)}…`;
}
