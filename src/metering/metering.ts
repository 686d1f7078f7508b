import type { Span } from "@opentelemetry/api";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import type { GatewayError } from "../errors/gateway-error.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { UpstreamHeaders } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import { sentMaxTokens } from "../model/sent-max-tokens.ts";
import { ResponseCollector } from "../model/collect-response.ts";
import type { StreamPart } from "../model/stream-part.ts";
import type { RouteObserver, Target } from "../routing/route-chat.ts";
import type { GatewayTelemetry, ResponseCacheOutcome } from "../telemetry/gateway-telemetry.ts";
import type { CostRecord } from "./cost-record.ts";
import { decoderPromptCount } from "./decoder-prompt-count.ts";
import { PriceBook } from "./price-book.ts";
import { RequestMeter, type CacheHit, type MeterOutcome, type MeterStart } from "./request-meter.ts";
import type { TokenCounter } from "./token-counter.ts";

// One metered call per routed request: the meter, the telemetry spans and the ledger, joined so
// the handler makes one call at each step. `settle` computes the record (before the last bytes,
// because a stream's final event carries its cost); `commit` queues it for the ledger, after the
// last byte, and closes the spans. A request leaves exactly one record however it ended, and one
// more for each call the provider billed before the route moved on (see mayTryNext).

export type MeteringDeps = {
  config: ResolvedConfig;
  ledger: Ledger;
  counter: TokenCounter;
  telemetry: GatewayTelemetry;
  log?: (line: string) => void;
};

/** A target as records name it (fallbackFrom's provider and model). */
export type RefusedTarget = { provider: string; model: string };

/**
 * Charges a billed call the route wants to move on from; `refused`: the targets skipped so far for
 * a per-target refusal, which the route will not call (see Ticket.chargeEarlierCall).
 */
export type ChargeEarlierCall = (record: CostRecord, refused: readonly RefusedTarget[]) => Promise<boolean>;

/** nginx's "client closed request": the status a record gets when the client left before the answer. */
const CLIENT_CLOSED = 499;

export class Metering {
  readonly prices: PriceBook;
  /** Calls begun and not yet recorded (or discarded). */
  private readonly open = new Set<MeteredCall>();
  private whenIdle: (() => void)[] = [];

  constructor(private readonly deps: MeteringDeps) {
    this.prices = new PriceBook(deps.config.providers, deps.log);
  }

  start(start: MeterStart, requestSpan: Span): MeteredCall {
    const call = new MeteredCall(new RequestMeter(start, { prices: this.prices, counter: this.deps.counter }), start, requestSpan, this.deps);
    this.open.add(call);
    call.onFinished(() => {
      this.open.delete(call);
      if (this.open.size > 0) return;
      for (const wake of this.whenIdle.splice(0)) wake();
    });
    return call;
  }

  /**
   * Resolves when every call begun so far has its record, or after `timeoutMs`; true if they all
   * did. A server that cuts its last streams on shutdown waits here for their records.
   */
  recorded(timeoutMs: number): Promise<boolean> {
    if (this.open.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.whenIdle.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

export class MeteredCall implements RouteObserver {
  private chatSpan: Span | undefined;
  private target: Target | undefined;
  private settled: Promise<CostRecord> | undefined;
  private committed = false;
  private discarded = false;
  private attemptStartedAt = 0;
  private firstChunkAt: number | undefined;
  /** The last call made failed and has its duration point already (attemptFailed). */
  private lastAttemptRecorded = false;
  /** The answer as given, kept only when content capture is on (for gen_ai.output.messages). */
  private readonly output: ResponseCollector | undefined;
  private answer: ChatResponse | undefined;
  private readonly settledListeners: ((record: CostRecord | undefined) => void)[] = [];
  /** The last call failed, billed; it gets a record of its own if another target is tried. */
  private billedFailure: { meter: RequestMeter; target: Target; outcome: MeterOutcome } | undefined;
  /** The last call's failure, for the record's fallbackFrom if another target is tried. */
  private lastFailure: { target: { providerName: string; model: string }; errorType: string } | undefined;
  /** Billed calls the route moved on from, each with a record of its own. */
  private earlierCalls = 0;
  /** Charges such a call to the request's budgets, if they can take it (see Ticket). */
  private chargeEarlierCall: ChargeEarlierCall = async () => true;
  /** Targets the route skipped, refused for this request by the per-target step: never called. */
  private readonly refused: RefusedTarget[] = [];
  /** What the response cache said, where it was asked (as `x-tollgate-cache`): for telemetry. */
  private responseCache: ResponseCacheOutcome | undefined;

  constructor(
    private readonly meter: RequestMeter,
    private readonly start: MeterStart,
    private readonly requestSpan: Span,
    private readonly deps: MeteringDeps,
  ) {
    if (deps.telemetry.captureContent) this.output = new ResponseCollector();
  }

  attemptStarted(target: Target, request: ChatRequest, startedAt: number): UpstreamHeaders | undefined {
    if (this.lastFailure) this.meter.fellBackFrom(this.lastFailure.target, this.lastFailure.errorType);
    this.lastFailure = undefined;
    this.target = target;
    this.attemptStartedAt = startedAt;
    this.firstChunkAt = undefined;
    this.lastAttemptRecorded = false;
    this.meter.attempting(
      { providerName: target.model.providerName, model: target.modelName },
      startedAt,
      { sentMaxTokens: sentMaxTokens(target.model.providerType, request), decoderPromptCount: decoderPromptCount(target.model, target.modelName, request) },
    );
    // The span describes the call made: the request as the per-target policies left it.
    this.chatSpan = this.deps.telemetry.startChatSpan(this.requestSpan, request, {
      providerName: target.model.providerName,
      providerType: target.model.providerType,
      model: target.modelName,
      baseUrl: target.model.baseUrl,
    });
    return this.deps.telemetry.traceHeaders(this.chatSpan);
  }

  firstChunk(at: number): void {
    this.firstChunkAt = at;
  }

  attemptFailed(target: Target, error: GatewayError, clientLeft: boolean): void {
    this.billedFailure = undefined;
    // A call cut off because the client left had the prompt: it is billed as it stands, and the
    // route ends there. A provider's failure is billed only where it says (BilledCall).
    // The usage it reported before the client left (Anthropic's message_start) is what is billed.
    if (clientLeft && error.billed?.usage) this.meter.attemptFailed(error.billed);
    if (!clientLeft) {
      const why = error.code ?? error.kind;
      this.meter.attemptFailed(error.billed);
      this.lastFailure = { target: { providerName: target.model.providerName, model: target.modelName }, errorType: why };
      if (error.billed) {
        const requestId = `${this.start.requestId}.${this.earlierCalls + 1}`;
        this.billedFailure = { meter: this.meter.detachAttempt(requestId), target, outcome: { status: "error", httpStatus: error.status, errorType: why } };
      }
    }
    // Cancelled by our client, not failed by the provider: kept apart in error.type.
    const errorType = clientLeft ? "cancelled" : error.code ?? error.kind;
    this.lastAttemptRecorded = true;
    this.deps.telemetry.recordFailedAttempt(
      { providerName: target.model.providerName, providerType: target.model.providerType, model: target.modelName },
      (performance.now() - this.attemptStartedAt) / 1000,
      errorType,
    );
    // A call the client cut short ends the request: its span is ended with the record (commit),
    // which bills the call, with tollgate's own count where the provider reported none.
    if (!this.chatSpan || clientLeft) return;
    // A call the provider bills though it failed (a stream cut after it began) shows what it was billed for.
    this.deps.telemetry.endChatSpan(this.chatSpan, { error: { type: errorType, message: error.message }, ...(error.billed?.usage ? { usage: error.billed.usage } : {}) });
    this.chatSpan = undefined;
  }

  targetRefused(target: Target): void {
    this.refused.push({ provider: target.model.providerName, model: target.modelName });
  }

  observe(part: StreamPart): void {
    this.meter.observe(part);
    this.output?.add(part);
  }

  notePolicies(moment: "route" | "target" | "skipped", notes: string[], warnings: string[]): void {
    this.meter.notePolicies(moment, notes, warnings);
  }

  policyNotes(): string[] {
    return this.meter.policyNotes();
  }

  servedFromCache(hit: CacheHit): void {
    this.responseCache = "hit";
    this.meter.servedFromCache(hit);
  }

  /** The response cache was asked and had no answer: the route's providers answer. */
  missedResponseCache(): void {
    this.responseCache = "miss";
  }

  noteSoftBudgets(scopes: string[]): void {
    this.meter.noteSoftBudgets(scopes);
  }

  /**
   * How a request that got no answer ended (a no-op once it is recorded). A client that left
   * gets an "aborted" record; a refusal before any provider was called (a policy's 400) gets
   * none; anything else, an error record.
   */
  async fail(failure: GatewayError, clientGone: boolean): Promise<void> {
    if (clientGone) await this.commit({ status: "aborted", httpStatus: CLIENT_CLOSED });
    else if (this.target === undefined && this.settled === undefined && failure.status < 500) this.discard(failure.status);
    else await this.commit({ status: "error", httpStatus: failure.status, errorType: failure.code ?? failure.kind });
  }

  /** Called once, with the record when one is made, or with nothing when the request is discarded. */
  onFinished(listener: (record: CostRecord | undefined) => void): void {
    this.settledListeners.push(listener);
  }

  /** How a billed call the route moves on from is charged to the request's budgets. */
  chargeEarlierCallsWith(charge: ChargeEarlierCall): void {
    this.chargeEarlierCall = charge;
  }

  /**
   * The route would try its next target. A call that failed but was billed is recorded on its own
   * (see attemptOf) and charged to the budgets first; where a hard budget cannot take it on top of
   * this request's reservation, the route stops there, and the request's record bills that call.
   */
  async mayTryNext(): Promise<boolean> {
    const failed = this.billedFailure;
    if (!failed) return true;
    this.billedFailure = undefined;
    let call: CostRecord;
    try {
      call = { ...(await failed.meter.finish(failed.outcome)), attemptOf: this.start.requestId };
    } catch (error) {
      this.deps.log?.(`[tollgate] error: no cost record for an earlier call of ${this.start.requestId}: ${(error as Error)?.stack ?? String(error)}`);
      return false;
    }
    if (!(await this.chargeEarlierCall(call, [...this.refused]))) return false;
    this.earlierCalls++;
    this.meter.attemptRecordedApart();
    // The route has moved on from that call: the request's record says so now, also when the
    // client leaves before the next target starts.
    if (this.lastFailure) this.meter.fellBackFrom(this.lastFailure.target, this.lastFailure.errorType);
    this.lastFailure = undefined;
    this.deps.ledger.record(call);
    // Its duration point was recorded when it failed; its tokens and cost are recorded here.
    this.deps.telemetry.recordMetrics(call, { providerName: failed.target.model.providerName, providerType: failed.target.model.providerType }, {});
    return true;
  }

  /**
   * The request was refused (a 400 from a policy) before any upstream call: no record, no
   * metrics, only the span closed. Bad input leaves no partial state.
   */
  discard(httpStatus: number): void {
    if (this.committed || this.discarded) return;
    this.discarded = true;
    if (this.chatSpan) this.deps.telemetry.endChatSpan(this.chatSpan, {});
    this.chatSpan = undefined;
    this.deps.telemetry.endRequestSpan(this.requestSpan, { httpStatus, ...(this.responseCache ? { responseCache: this.responseCache } : {}) });
    for (const listener of this.settledListeners) listener(undefined);
  }

  answered(response: ChatResponse): void {
    this.meter.answered(response);
    this.answer = response;
  }

  /** The record, computed once; later calls get the same one whatever outcome they pass. */
  settle(outcome: MeterOutcome): Promise<CostRecord> {
    this.settled ??= this.meter.finish(outcome);
    return this.settled;
  }

  /** Settles (if not yet) and hands the record to the ledger and telemetry, once. */
  async commit(outcome: MeterOutcome): Promise<CostRecord | undefined> {
    let record: CostRecord;
    try {
      record = await this.settle(outcome);
    } catch (error) {
      // A bug in metering itself: no record can be made, but the budget's hold must still go,
      // and nothing may reject unhandled (commits are fire-and-forget on the stream path).
      this.deps.log?.(`[tollgate] error: no cost record for ${this.start.requestId}: ${(error as Error)?.stack ?? String(error)}`);
      this.discard(outcome.httpStatus >= 400 ? outcome.httpStatus : 500);
      return undefined;
    }
    if (this.committed || this.discarded) return record;
    this.committed = true;
    this.deps.ledger.record(record);
    for (const listener of this.settledListeners) listener(record);
    const telemetry = this.deps.telemetry;
    if (this.chatSpan) {
      telemetry.endChatSpan(this.chatSpan, {
        usage: record.usage,
        ...(record.estimated ? { usageEstimated: true } : {}),
        ...(this.meter.responseId ? { responseId: this.meter.responseId } : {}),
        ...(record.responseModel ? { responseModel: record.responseModel } : {}),
        ...(record.finishReason ? { finishReason: record.finishReason } : {}),
        ...(record.stream && this.firstChunkAt !== undefined ? { timeToFirstChunkSeconds: (this.firstChunkAt - this.attemptStartedAt) / 1000 } : {}),
        ...(record.status === "error" ? { error: { type: record.errorType ?? "_OTHER", message: "the provider failed" } } : {}),
        ...(record.status === "aborted" ? { error: { type: "cancelled", message: "the client went away before the answer ended" } } : {}),
        ...(this.output ? { output: (this.answer ?? this.output.response()).content } : {}),
      });
      this.chatSpan = undefined;
    }
    telemetry.endRequestSpan(this.requestSpan, { httpStatus: record.httpStatus, record, ...(this.responseCache ? { responseCache: this.responseCache } : {}) });
    if (this.responseCache) telemetry.recordResponseCache(record, this.responseCache);
    if (this.target) {
      // The record's duration runs from the request's arrival; the call began later than that.
      const operationMs = record.durationMs - (this.attemptStartedAt - this.start.receivedAt);
      telemetry.recordMetrics(
        record,
        { providerName: this.target.model.providerName, providerType: this.target.model.providerType },
        {
          ...(this.lastAttemptRecorded ? {} : { operationSeconds: Math.max(0, operationMs) / 1000 }),
          ...(this.firstChunkAt !== undefined ? { firstChunkSeconds: (this.firstChunkAt - this.attemptStartedAt) / 1000 } : {}),
        },
      );
    }
    return record;
  }
}
