import type { Caller } from "../auth/authenticate.ts";
import type { BilledCall } from "../errors/gateway-error.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import type { FinishReason, StreamPart } from "../model/stream-part.ts";
import { mergeUsage, plausibleUsage, wholeCount, ZERO_USAGE, type Usage } from "../model/usage.ts";
import { ZERO_COST } from "../pricing/compute-cost.ts";
import { isStandardTier } from "../pricing/service-tier.ts";
import { ADMIN_NAME, type CostRecord, type RecordStatus } from "./cost-record.ts";
import type { PriceBook } from "./price-book.ts";
import { priceCall } from "./price-call.ts";
import { PROMPT_COUNTED_BY_DECODER, type DecoderPromptCount } from "./decoder-prompt-count.ts";
import { countRequestTokens, type TokenCounter } from "./token-counter.ts";
import { tokensPerSecondAfterFirst } from "./tokens-per-second.ts";

// Follows one request from arrival to its last byte and turns what it saw into the cost record:
// the usage the provider reported, or, where the provider said nothing (a stream cut off, a
// server that sends no usage), tollgate's own count of the tokens that went up and came back.

export type MeterDeps = { prices: PriceBook; counter: TokenCounter };

export type MeteredTarget = { providerName: string; model: string };

export type MeterStart = {
  requestId: string;
  caller: Caller;
  request: ChatRequest;
  dialect: "openai" | "anthropic";
  /** performance.now() at arrival; every duration is measured from here. */
  receivedAt: number;
};

export type MeterOutcome = {
  status: RecordStatus;
  httpStatus: number;
  errorType?: string;
  /**
   * The client has the answer's end (its last byte, or a failed stream's error event): the record
   * may wait on a local decoder's own count of a cut call's prompt (so may an "aborted" one: its
   * client has left).
   */
  afterLastByte?: boolean;
};

/** What the router knows of the call it is making, for billing it if no usage comes back. */
export type AttemptFacts = {
  /** The max_tokens the call was sent (none: undefined), which bounds what it can have generated. */
  sentMaxTokens?: number;
  /** The call's local decoder, asked for its own count of the prompt (see decoder-prompt-count.ts). */
  decoderPromptCount?: DecoderPromptCount;
};

/** An answer given from the response cache: billed nothing, saving what it cost when made. */
export type CacheHit = { provider: string; model: string; response: ChatResponse; savingsNano: number };

export class RequestMeter {
  private target: MeteredTarget | undefined;
  private upstreamStartedAt: number | undefined;
  private attempt: AttemptFacts = {};
  private firstContentAt: number | undefined;
  private usage: Usage | undefined;
  private responseModel: string | undefined;
  /** Where the provider says inference ran; Anthropic bills "us" above its global price. */
  private inferenceGeo: string | undefined;
  /** The service tier OpenAI says served the call (its project's default may be another than "default"). */
  private serviceTier: string | undefined;
  /** The provider's id of the answer (`chatcmpl-…`, `msg_…`), for telemetry. */
  responseId: string | undefined;
  private finishReason: FinishReason | undefined;
  /** Output text as it came, kept only to be counted if the provider never reports usage. */
  private readonly outputText: string[] = [];
  /** The model's thinking as it came (output too, and reasoning), kept for the same reason. */
  private readonly reasoningText: string[] = [];
  private cacheHit: CacheHit | undefined;
  /** How the last call made ended, when it failed: refused (not billed), or billed (BilledCall). */
  private lastAttempt: "running" | "refused" | "billed" = "running";
  /** What the policies changed, before routing and for the attempt that answered. */
  private routeNotes: string[] = [];
  private targetNotes: string[] = [];
  private skipNotes: string[] = [];
  private readonly warnings: string[] = [];
  /** The per-target policies' warnings for the call that answered (a fallback replaces them). */
  private targetWarnings: string[] = [];
  private softBudgets: string[] = [];
  /** OpenAI's citations an Anthropic client's answer had no place for (see seeAnnotations). */
  private droppedAnnotations = 0;
  private readonly fallbackFrom: NonNullable<CostRecord["fallbackFrom"]> = [];

  /** The wall-clock time of arrival (the meter starts after the body read, policies and admission). */
  private readonly arrivedAtWall: number;

  constructor(
    private readonly start: MeterStart,
    private readonly deps: MeterDeps,
    /** A billed call's record takes its request's arrival time: see detachAttempt. */
    arrivedAtWall?: number,
  ) {
    this.arrivedAtWall = arrivedAtWall ?? Math.round(Date.now() - (performance.now() - start.receivedAt));
  }

  /**
   * The router is calling `target`. The request's record bills the last call made; an earlier
   * call that was billed has a record of its own (`detachAttempt`).
   */
  attempting(target: MeteredTarget, startedAt: number, facts: AttemptFacts = {}): void {
    this.target = target;
    this.attempt = facts;
    this.upstreamStartedAt = startedAt;
    this.lastAttempt = "running";
    this.usage = undefined;
    // What an earlier call's answer said (its model, region, tier) is that call's, in its own
    // record: this call's answer says its own, or nothing.
    this.responseModel = undefined;
    this.responseId = undefined;
    this.inferenceGeo = undefined;
    this.serviceTier = undefined;
  }

  /**
   * That call failed before answering. A refusal (a 429, a 5xx) costs nothing; a call the
   * provider had taken (`billed`) costs its reported usage, or the prompt as counted.
   */
  attemptFailed(billed?: BilledCall): void {
    this.lastAttempt = billed ? "billed" : "refused";
    if (billed?.usage) this.usage = billed.usage;
    const answeredAs = billed?.answeredAs;
    if (answeredAs) {
      this.responseModel = answeredAs.model;
      this.inferenceGeo = answeredAs.inferenceGeo;
      this.serviceTier = answeredAs.serviceTier;
    }
  }

  /** A call failed and the route moved on to another target: the record says so. */
  fellBackFrom(failed: MeteredTarget, errorType: string): void {
    this.fallbackFrom.push({ provider: failed.providerName, model: failed.model, errorType });
  }

  /** The failed call just made has a record of its own now: this one no longer bills it. */
  attemptRecordedApart(): void {
    this.lastAttempt = "refused";
    this.usage = undefined;
  }

  /**
   * The failed, billed call just made, as a meter of its own, for the record of that call when
   * the route goes on to another target: each record is one call the provider bills.
   */
  detachAttempt(requestId: string): RequestMeter {
    // The request's own arrival time, not worked out again: the wall clock read later (±1 ms, or an
    // NTP step meanwhile) could put the call on another day than its request near midnight.
    const attempt = new RequestMeter({ ...this.start, requestId }, this.deps, this.arrivedAtWall);
    attempt.target = this.target;
    attempt.upstreamStartedAt = this.upstreamStartedAt;
    // Its client still waits for the route's answer: no decoder is asked for its count meanwhile.
    attempt.attempt = { sentMaxTokens: this.attempt.sentMaxTokens };
    attempt.lastAttempt = this.lastAttempt;
    attempt.usage = this.usage;
    attempt.inferenceGeo = this.inferenceGeo;
    attempt.serviceTier = this.serviceTier;
    attempt.responseModel = this.responseModel;
    attempt.routeNotes = this.routeNotes;
    attempt.targetNotes = this.targetNotes;
    attempt.skipNotes = [...this.skipNotes];
    attempt.targetWarnings = this.targetWarnings;
    // The route's policies and budgets shaped and admitted this call too.
    attempt.warnings.push(...this.warnings);
    attempt.softBudgets = this.softBudgets;
    attempt.fallbackFrom.push(...this.fallbackFrom);
    return attempt;
  }

  /** Every stream part, as it is written to the client. */
  observe(part: StreamPart): void {
    switch (part.type) {
      case "start":
        this.responseModel = part.model;
        this.responseId = part.id;
        this.inferenceGeo = part.inferenceGeo;
        this.serviceTier = part.serviceTier;
        break;
      case "text-delta":
        this.firstContentAt ??= performance.now();
        this.outputText.push(part.text);
        break;
      case "reasoning-delta":
        // Not the first content: TTFT and output speed are about the answer's visible tokens.
        this.reasoningText.push(part.text);
        break;
      case "tool-call-start":
        this.firstContentAt ??= performance.now();
        this.outputText.push(part.name);
        break;
      case "tool-call-delta":
        this.outputText.push(part.argumentsDelta);
        break;
      case "usage":
        this.usage = mergeUsage(this.usage, part.usage);
        break;
      case "finish":
        this.finishReason = part.reason;
        break;
      case "annotations":
        this.seeAnnotations(part.annotations.length);
        break;
      default:
        break;
    }
  }

  /** A whole (non-streamed) answer arrived. */
  answered(response: ChatResponse): void {
    this.firstContentAt = performance.now();
    this.responseModel = response.model;
    this.responseId = response.id;
    this.finishReason = response.finishReason;
    this.inferenceGeo = response.inferenceGeo;
    this.serviceTier = response.serviceTier;
    if (response.usage) this.usage = response.usage;
    if (response.annotations) this.seeAnnotations(response.annotations.length);
    if (response.reasoning) this.reasoningText.push(response.reasoning);
    for (const content of response.content) {
      if (content.type === "text") this.outputText.push(content.text);
      else if (content.type === "tool-call") this.outputText.push(content.name + content.arguments);
      // Claude's thinking is counted once, from `reasoning` above.
    }
  }

  /**
   * An OpenAI search model's citations reach OpenAI clients; Anthropic's answer has no place for
   * them (its own citations carry its search's encrypted index), so the record says they were
   * dropped, as a field a target does not take is.
   */
  private seeAnnotations(count: number): void {
    if (this.start.dialect === "anthropic") this.droppedAnnotations += count;
  }

  notePolicies(moment: "route" | "target" | "skipped", notes: string[], warnings: string[]): void {
    if (moment === "route") {
      this.routeNotes = notes;
      this.warnings.push(...warnings);
    } else if (moment === "skipped") {
      // A target skipped before the one that answered stays said: the answer came from elsewhere.
      this.skipNotes.push(...notes);
      this.warnings.push(...warnings);
    } else {
      // A fallback target replaces the failed one's notes and warnings: the record says what was
      // done to the call that answered ("temperature was not sent" to o3 is not true of gpt-4o).
      this.targetNotes = notes;
      this.targetWarnings = warnings;
    }
  }

  noteSoftBudgets(scopes: string[]): void {
    this.softBudgets = scopes;
    for (const scope of scopes) this.warnings.push(`soft budget ${scope} had not enough left for this request's worst case (a hard budget would have refused it); served anyway`);
  }

  /** Every note so far, as the record and the x-tollgate-policies header give them. */
  policyNotes(): string[] {
    return [...this.routeNotes, ...this.skipNotes, ...this.targetNotes];
  }

  servedFromCache(hit: CacheHit): void {
    this.cacheHit = hit;
    this.firstContentAt = performance.now();
    this.responseModel = hit.response.model;
    this.responseId = hit.response.id;
    this.finishReason = hit.response.finishReason;
  }

  /** Milliseconds from arrival to first content, as the client saw it. */
  ttftMs(): number | null {
    return this.firstContentAt === undefined ? null : round1(this.firstContentAt - this.start.receivedAt);
  }

  async finish(outcome: MeterOutcome): Promise<CostRecord> {
    const finishedAt = performance.now();
    const hit = this.cacheHit;
    const { usage, estimated, promptByDecoder } = hit ? { usage: ZERO_USAGE, estimated: false } : await this.settleUsage(outcome);
    const target = this.target ?? (hit ? { providerName: hit.provider, model: hit.model } : undefined);
    const warnings: string[] = [...this.warnings, ...this.targetWarnings];
    if (promptByDecoder) warnings.push(PROMPT_COUNTED_BY_DECODER);
    if (this.droppedAnnotations > 0) warnings.push(annotationsDroppedWarning(this.droppedAnnotations));
    let cost = hit ? { ...ZERO_COST, cacheSavingsNano: hit.savingsNano } : ZERO_COST;
    let unpriced = false;
    let inferenceGeo = this.inferenceGeo;
    let serviceTier = this.serviceTier;
    if (target && !hit) {
      const heard = { inferenceGeo: this.inferenceGeo, serviceTier: this.serviceTier };
      const priced = priceCall(this.deps.prices, { ...target, responseModel: this.responseModel, request: this.start.request, heard, usage });
      ({ inferenceGeo, serviceTier } = priced);
      warnings.push(...priced.warnings);
      if (priced.cost) cost = priced.cost;
      else unpriced = true;
    }
    const caller = this.start.caller;
    const record: CostRecord = {
      requestId: this.start.requestId,
      time: new Date(this.arrivedAtWall).toISOString(),
      keyId: caller.kind === "key" ? caller.key.id : ADMIN_NAME,
      team: caller.kind === "key" ? caller.key.team : ADMIN_NAME,
      route: this.start.request.route,
      provider: target?.providerName ?? "",
      model: target?.model ?? "",
      dialect: this.start.dialect,
      stream: this.start.request.stream,
      status: outcome.status,
      httpStatus: outcome.httpStatus,
      usage,
      cost,
      ttftMs: this.ttftMs(),
      upstreamTtftMs:
        this.firstContentAt === undefined || this.upstreamStartedAt === undefined ? null : round1(this.firstContentAt - this.upstreamStartedAt),
      durationMs: round1(finishedAt - this.start.receivedAt),
      outputTokensPerSecond: this.start.request.stream ? tokensPerSecondAfterFirst(usage, this.firstContentAt, finishedAt) : null,
      estimated,
      unpriced,
      policies: [...this.policyNotes(), ...(this.droppedAnnotations > 0 ? ["annotations=dropped"] : []), ...(hit ? ["response_cache=hit"] : [])],
      warnings,
    };
    if (caller.kind === "admin") record.admin = true;
    if (this.responseModel) record.responseModel = this.responseModel;
    if (inferenceGeo && inferenceGeo !== "global" && !hit) record.inferenceGeo = inferenceGeo;
    if (!isStandardTier(serviceTier) && !hit) record.serviceTier = serviceTier;
    if (outcome.errorType) record.errorType = outcome.errorType;
    if (this.finishReason) record.finishReason = this.finishReason;
    if (this.softBudgets.length > 0) record.softBudgetsExceeded = this.softBudgets;
    if (this.fallbackFrom.length > 0) record.fallbackFrom = [...this.fallbackFrom];
    return record;
  }

  /**
   * What to bill. Reported usage wins. Missing input is counted from the request; missing output
   * from the text that came back, the model's thinking included (and counted as reasoning too).
   * A stream that did not complete may hold a placeholder output count (Anthropic's
   * message_start says 1), so there the larger of report and count is kept. A local decoder's call
   * cut short is asked for its own count of the prompt, once the client no longer waits.
   *
   * A count is held to the max_tokens the call was sent: the model generated no more than that
   * (its reasoning or thinking included), and js-tiktoken's o200k count of Claude's or a local
   * model's text can come out above it, tokens that cannot exist. A count the provider reported
   * is billed as reported, even above its max_tokens: that is what the provider bills.
   */
  private async settleUsage({ status, afterLastByte }: MeterOutcome): Promise<{ usage: Required<Usage>; estimated: boolean; promptByDecoder?: boolean }> {
    const { usage: reported, dropped } = plausibleUsage(this.usage ?? {});
    const cameBack = this.outputText.length > 0 || this.reasoningText.length > 0;
    // An aborted call counts as having reached the provider (it read the prompt), unless the last
    // call had already been refused: a client leaving after a 503 costs nothing.
    const reachedProvider =
      this.target !== undefined &&
      (cameBack || this.usage !== undefined || this.lastAttempt === "billed" || (status === "aborted" && this.lastAttempt !== "refused"));
    let estimated = dropped;
    let inputTokens = reported.inputTokens;
    let promptByDecoder = false;
    if (inputTokens === undefined && reachedProvider) {
      if (status === "aborted" || afterLastByte) inputTokens = await this.attempt.decoderPromptCount?.();
      promptByDecoder = inputTokens !== undefined;
      if (!promptByDecoder) {
        inputTokens = await countRequestTokens(this.deps.counter, this.start.request);
        estimated = true;
      }
    }
    let outputTokens = reported.outputTokens;
    let reasoningTokens = reported.reasoningTokens;
    if (outputTokens === undefined || (status !== "ok" && cameBack)) {
      const reasoning = await this.countText(this.reasoningText);
      const counted = Math.min(reasoning + (await this.countText(this.outputText)), this.attempt.sentMaxTokens ?? Infinity);
      if (counted > (outputTokens ?? 0)) {
        outputTokens = counted;
        reasoningTokens = Math.max(reasoningTokens ?? 0, Math.min(reasoning, counted));
        estimated = true;
      }
    }
    return {
      usage: {
        inputTokens: wholeCount(inputTokens),
        cacheReadTokens: wholeCount(reported.cacheReadTokens),
        cacheWrite5mTokens: wholeCount(reported.cacheWrite5mTokens),
        cacheWrite1hTokens: wholeCount(reported.cacheWrite1hTokens),
        outputTokens: wholeCount(outputTokens),
        reasoningTokens: wholeCount(reasoningTokens),
      },
      estimated,
      promptByDecoder,
    };
  }

  private async countText(parts: string[]): Promise<number> {
    return parts.length > 0 ? await this.deps.counter.count(parts.join("")) : 0;
  }
}

function annotationsDroppedWarning(count: number): string {
  return `the answer's annotations (${count}: OpenAI's url citations) were not passed on: an Anthropic client's answer has no place for them`;
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;
