import type { Context } from "hono";
import type { PolicyChain } from "../../policies/policy-chain.ts";
import type { PolicyContext } from "../../policies/policy.ts";
import { isDeterministic, type ResponseCache } from "../../policies/response-cache/response-cache.ts";
import { teamOf } from "../auth/authenticate.ts";
import type { RouteConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { summarizeRecord } from "../dialects/stream-summary.ts";
import { toGatewayError } from "../errors/gateway-error.ts";
import type { MeteredCall, Metering } from "../metering/metering.ts";
import type { TokenCounter } from "../metering/token-counter.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import type { Admission } from "../budgets/admission.ts";
import { ResponseCollector } from "../model/collect-response.ts";
import type { CheapestFirst } from "../routing/cheapest-first.ts";
import type { ProviderSlot } from "../routing/create-chat-models.ts";
import { generateOnRoute, streamOnRoute, type AdaptToTarget, type RoutedStream, type RouteObserver } from "../routing/route-chat.ts";
import type { KeyValueStore } from "../store/key-value-store.ts";
import { answerFromCache } from "./answer-from-cache.ts";
import { findRoute } from "./find-route.ts";
import { perTargetStep } from "./per-target-step.ts";
import { streamHeaders } from "./answer-headers.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { readJsonBody } from "./read-json-body.ts";
import { sendJsonAnswer, sendStream, streamOutcome, type StreamHost } from "./send-answer.ts";

// The request path, in the order a reader follows it:
// dialect parser → route lookup → policies → admission (budgets, rate limits) → meter →
// response cache → router (→ policies per target → adapter) → stream parts → dialect renderer →
// cost record → settlement of the budget.
// A request refused before any upstream call (bad JSON, unknown route, a key without access, a
// policy's 400, a budget's 402, a rate limit's 429) leaves no cost record and holds no budget.

export type ChatHandlerDeps = {
  config: ResolvedConfig;
  admission: Admission;
  log: (line: string) => void;
  slots: Map<string, ProviderSlot>;
  /** Orders a "cheapest" route's targets per request, and hears how long each target took. */
  order: CheapestFirst;
  metering: Metering;
  policies: Map<string, PolicyChain>;
  store: KeyValueStore;
  counter: TokenCounter;
  /** Keeps the request alive until `work` is done (waitUntil on Workers): settling, a stream's record. */
  holdOpen: (c: Context<GatewayEnv>, work: Promise<unknown>) => void;
  /** Closes the connection of a client whose stream was cut because it stopped reading. */
  dropClient: ((c: Context<GatewayEnv>) => void) | undefined;
};

/** Where a cacheable request's answer would be kept: the route's response cache, and its key there. */
type CacheEntry = { cache: ResponseCache; key: string };

/** One admitted request on its way to a provider: everything answer() and streamAnswer() need. */
type Job = {
  request: ChatRequest;
  route: RouteConfig;
  slots: Map<string, ProviderSlot>;
  call: MeteredCall;
  adapt: AdaptToTarget;
  cacheEntry: CacheEntry | undefined;
  streaming: StreamHost;
  /** Hears of each upstream call: the metered call, watched for timeouts on a "cheapest" route. */
  observer: RouteObserver;
};

/**
 * Keeps a completed answer for the response cache; the cache only saves money, so failures are
 * ignored. A refusal or a content filter's stop is not kept: it comes from the provider's safety
 * systems, which may answer the same request next time, and one false refusal would otherwise be
 * everybody's answer for the cache's TTL.
 */
function keepAnswer(cacheEntry: CacheEntry | undefined, response: ChatResponse, record: CostRecord): void {
  if (!cacheEntry || record.status !== "ok") return;
  if (response.finishReason === "content-filter" || response.refusalDetails || response.refusal) return;
  void cacheEntry.cache.save(cacheEntry.key, { response: withBilledUsage(response, record), provider: record.provider, model: record.model, costNano: record.cost.totalNano }).catch(() => undefined);
}

/** An answer whose provider reported no usage carries what tollgate counted and bills, not zero. */
function withBilledUsage(response: ChatResponse, record: CostRecord): ChatResponse {
  return response.usage ? response : { ...response, usage: record.usage };
}

export function createChatHandler({ config, admission, log: logLine, slots, order, metering, policies, store, counter, holdOpen, dropClient }: ChatHandlerDeps) {
  return async function handleChat(c: Context<GatewayEnv>): Promise<Response> {
    const parsed = c.get("dialect").parseRequest(await readJsonBody(c.req.raw, config.server.maxBodyBytes), c.req.raw.headers);
    const route = findRoute(config, c.get("caller"), parsed.route);
    const chain = policies.get(parsed.route)!;
    const context: PolicyContext = { route: parsed.route, team: teamOf(c.get("caller")), store, counter, perRequest: new Map() };
    const { request, log } = await chain.apply(parsed, context);
    // Budgets and rate limits: a 402 / 429 / 400 here reserves nothing and records nothing.
    const requestId = c.get("requestId");
    const ticket = await admission.admit({ requestId, caller: c.get("caller"), routeName: parsed.route, route, request });

    let call: MeteredCall | undefined;
    try {
      // The budget reserved this many output tokens for a request that named none: hold it to that.
      const bounded = ticket.outputBound !== undefined ? { ...request, maxTokens: ticket.outputBound } : request;
      if (bounded !== request) log.notes.push(`max_tokens=budget-bound:${ticket.outputBound}`);

      call = metering.start(
        { requestId, caller: c.get("caller"), request: bounded, dialect: c.get("dialect").name, receivedAt: c.get("receivedAt") },
        takeRequestSpan(c),
      );
      call.notePolicies("route", log.notes, log.warnings);
      call.noteSoftBudgets(ticket.softExceeded);
      // The reservation gives way to the actual cost once the record is made (or to nothing).
      call.chargeEarlierCallsWith((record, refused) => ticket.chargeEarlierCall(record, refused));
      call.onFinished((record) => {
        if (record) order.heard(record);
        const settling = ticket.settle(record).catch((error: Error) => logLine(`[tollgate] error: settling ${requestId} failed: ${error.message}`));
        try {
          holdOpen(c, settling);
        } catch {
          // No way to hold the request open here (a host without waitUntil): the settle runs anyway.
        }
      });
      c.set("ticket", ticket);
      return await answerRouted(c, chain, context, {
        request: bounded,
        route: order.routeFor(bounded, route),
        call,
        observer: order.watching(call, route, bounded.stream),
        slots,
        streaming: {
          keepAliveMs: config.server.streamKeepAliveSeconds * 1000,
          sendTimeoutMs: config.server.streamSendTimeoutSeconds * 1000,
          dropClient: dropClient && (() => dropClient(c)),
          holdOpen: (work) => holdOpen(c, work),
        },
      });
    } catch (error) {
      // Whatever failed past admission, the router's failures included, is recorded here (see
      // MeteredCall.fail): one record, unless no provider was called, the client is still there
      // and the failure is a 4xx (every target refused the request, say), which leaves none.
      // Either way the reservation is released.
      const failure = toGatewayError(error);
      if (call) await call.fail(failure, c.req.raw.signal.aborted);
      else await ticket.settle(undefined).catch(() => undefined);
      throw failure;
    }
  };
}

/** A cached answer when there is one; otherwise the route's providers, streamed or not. */
async function answerRouted(
  c: Context<GatewayEnv>,
  chain: PolicyChain,
  context: PolicyContext,
  { request, route, call, slots, streaming, observer }: Omit<Job, "adapt" | "cacheEntry">,
): Promise<Response> {
  const cacheEntry = chain.responseCache && isDeterministic(request) ? { cache: chain.responseCache, key: await chain.responseCache.keyFor(context.route, route.targets, request, c.get("caller")) } : undefined;
  const hit = cacheEntry && (await cacheEntry.cache.lookup(cacheEntry.key).catch(() => undefined));
  if (hit) return answerFromCache(c, request, call, hit, streaming);
  if (cacheEntry) call.missedResponseCache();

  const adapt = perTargetStep(chain, context, (log, moment) => call.notePolicies(moment, log.notes, log.warnings));
  const job: Job = { request, route, slots, call, adapt, cacheEntry, streaming, observer };
  return request.stream ? streamAnswer(c, job) : answer(c, job);
}

function takeRequestSpan(c: Context<GatewayEnv>) {
  const holder = c.get("requestSpan");
  holder.handedOff = true;
  return holder.span;
}

async function answer(c: Context<GatewayEnv>, { request, route, slots, call, adapt, cacheEntry, observer }: Job): Promise<Response> {
  // node-server aborts the request's signal when the client goes away; the upstream call follows.
  const clientSignal = c.req.raw.signal;
  // A failure here is recorded by handleChat's catch, like every failure past admission.
  const routed = await generateOnRoute(request, route, slots, clientSignal, observer, adapt);
  call.answered(routed.response);
  return sendJsonAnswer(
    c,
    call,
    (record) => {
      keepAnswer(cacheEntry, routed.response, record);
      return withBilledUsage(routed.response, record);
    },
    cacheEntry ? "miss" : undefined,
  );
}

async function streamAnswer(c: Context<GatewayEnv>, { request, route, slots, call, adapt, cacheEntry, streaming, observer }: Job): Promise<Response> {
  // A stream's upstream stops on either sign that the client is gone: the request's signal, or
  // the response body being cancelled when a write to the client fails.
  const upstream = new AbortController();
  const clientSignal = c.req.raw.signal;
  const stopUpstream = () => upstream.abort(new Error("client disconnected"));
  // Whether the client left, apart from the upstream's abort, which tollgate's own failures use too.
  const client = { left: false };
  const clientGone = () => {
    client.left = true;
    stopUpstream();
  };
  clientSignal.addEventListener("abort", clientGone, { once: true });
  // A client that left while the request was being admitted never fires the event.
  if (clientSignal.aborted) clientGone();
  const forgetClient = () => clientSignal.removeEventListener("abort", clientGone);

  let routed;
  try {
    routed = await streamOnRoute(request, route, slots, upstream.signal, observer, adapt, streaming.keepAliveMs);
  } catch (error) {
    forgetClient();
    throw error; // recorded by handleChat's catch
  }
  try {
    return respondWithStream(c, { request, call, cacheEntry, streaming }, routed, client, stopUpstream, forgetClient);
  } catch (error) {
    // Nothing reached the client: stop the provider before the failure is recorded.
    stopUpstream();
    forgetClient();
    void routed.rest.return(undefined).catch(() => undefined);
    throw error;
  }
}

function respondWithStream(
  c: Context<GatewayEnv>,
  { request, call, cacheEntry, streaming }: Pick<Job, "request" | "call" | "cacheEntry" | "streaming">,
  { target, held, rest }: RoutedStream,
  client: { readonly left: boolean },
  stopUpstream: () => void,
  forgetClient: () => void,
): Response {
  let failure: string | undefined;
  // A cacheable stream is kept whole once it completes, so the next identical request is a hit.
  const collector = cacheEntry ? new ResponseCollector() : undefined;
  // The client's leaving tells a stopped upstream from a finished one (see streamOutcome).
  const closing = (outcome: "completed" | "failed" | "cancelled") => streamOutcome(outcome, { clientLeft: client.left, errorType: failure ?? "upstream" });
  const headers = streamHeaders(c, request.route, target.model.providerName, call.policyNotes(), cacheEntry ? "miss" : undefined);
  return sendStream(
    streaming,
    {
      held,
      rest,
      renderer: c.get("dialect").createStreamRenderer(request),
      observe(part) {
        call.observe(part);
        collector?.add(part);
        if (part.type === "error") failure = part.error.code ?? part.error.kind;
      },
      // Settled with how the stream ended, so the summary and the record it comes before agree. A
      // failed stream's summary follows its error event, which the client has: a cut call's record
      // may ask its decoder for the prompt's count first (was: settled without, and the record kept
      // tollgate's own count though the decoder could still say).
      async summary(outcome) {
        const record = await call.settle({ ...closing(outcome), afterLastByte: outcome === "failed" });
        if (collector && outcome === "completed") keepAnswer(cacheEntry, collector.response(), record);
        return summarizeRecord(record);
      },
      abortUpstream: stopUpstream,
      onClose(outcome) {
        forgetClient();
        // The client has its last byte: a cut call's record may ask its decoder for the prompt's
        // count meanwhile.
        return call.commit({ ...closing(outcome), afterLastByte: true });
      },
    },
    headers,
  );
}
