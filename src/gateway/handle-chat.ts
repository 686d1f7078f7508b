import type { Context } from "hono";
import { mayUseRoute, type Caller } from "../auth/authenticate.ts";
import type { RouteConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { summarizeRecord, summaryHeaders } from "../dialects/stream-summary.ts";
import { GatewayError, toGatewayError } from "../errors/gateway-error.ts";
import type { MeteredCall, Metering } from "../metering/metering.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ProviderSlot } from "../routing/create-chat-models.ts";
import { generateOnRoute, streamOnRoute } from "../routing/route-chat.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { readJsonBody } from "./read-json-body.ts";
import { streamPartsToSse } from "./stream-parts-to-sse.ts";

// The request path, in the order a reader follows it:
// dialect parser → route lookup → meter → router (→ adapter) → stream parts → dialect renderer.
// Policies join this path in a later step, as one call here. A request that fails before the
// meter starts (bad JSON, unknown route, a key without access) leaves no cost record.

export type ChatHandlerDeps = { config: ResolvedConfig; slots: Map<string, ProviderSlot>; metering: Metering };

/** nginx's "client closed request": the status a record gets when the client left before the answer. */
const CLIENT_CLOSED = 499;

export function createChatHandler({ config, slots, metering }: ChatHandlerDeps) {
  return async function handleChat(c: Context<GatewayEnv>): Promise<Response> {
    const request = c.get("dialect").parseRequest(await readJsonBody(c.req.raw, config.server.maxBodyBytes));
    const route = findRoute(config, c.get("caller"), request.route);
    const call = metering.start(
      { requestId: c.get("requestId"), caller: c.get("caller"), request, dialect: c.get("dialect").name, receivedAt: c.get("receivedAt") },
      takeRequestSpan(c),
    );
    return request.stream ? streamAnswer(c, request, route, slots, call) : answer(c, request, route, slots, call);
  };
}

function takeRequestSpan(c: Context<GatewayEnv>) {
  const holder = c.get("requestSpan");
  holder.handedOff = true;
  return holder.span;
}

function findRoute(config: ResolvedConfig, caller: Caller, name: string): RouteConfig {
  const route = config.routes[name];
  if (route && mayUseRoute(caller, name)) return route;
  const allowed = Object.keys(config.routes).filter((routeName) => mayUseRoute(caller, routeName));
  if (route) throw new GatewayError("permission", `this key may not use route "${name}"; it may use: ${allowed.join(", ") || "none"}`, { param: "model" });
  throw new GatewayError("not_found", `unknown route "${name}": set model to one of ${allowed.join(", ") || "(no routes)"}`, { param: "model" });
}

async function answer(c: Context<GatewayEnv>, request: ChatRequest, route: RouteConfig, slots: Map<string, ProviderSlot>, call: MeteredCall): Promise<Response> {
  // node-server aborts the request's signal when the client goes away; the upstream call follows.
  const clientSignal = c.req.raw.signal;
  let routed;
  try {
    routed = await generateOnRoute(request, route, slots, clientSignal, call);
  } catch (error) {
    const failure = toGatewayError(error);
    await call.commit(
      clientSignal.aborted
        ? { status: "aborted", httpStatus: CLIENT_CLOSED }
        : { status: "error", httpStatus: failure.status, errorType: failure.code ?? failure.kind },
    );
    throw failure;
  }
  call.answered(routed.response);
  // Settled now for the headers; handed to the ledger once the body is on its way.
  const record = await call.settle({ status: "ok", httpStatus: 200 });
  const body = c.get("dialect").renderResponse(routed.response) as object;
  const response = c.json(body, 200, summaryHeaders(summarizeRecord(record)));
  void call.commit({ status: "ok", httpStatus: 200 });
  return response;
}

async function streamAnswer(c: Context<GatewayEnv>, request: ChatRequest, route: RouteConfig, slots: Map<string, ProviderSlot>, call: MeteredCall): Promise<Response> {
  // A stream's upstream stops on either sign that the client is gone: the request's signal, or
  // the response body being cancelled when a write to the client fails.
  const upstream = new AbortController();
  const clientSignal = c.req.raw.signal;
  const stopUpstream = () => upstream.abort(new Error("client disconnected"));
  clientSignal.addEventListener("abort", stopUpstream, { once: true });
  const forgetClient = () => clientSignal.removeEventListener("abort", stopUpstream);

  let routed;
  try {
    routed = await streamOnRoute(request, route, slots, upstream.signal, call);
  } catch (error) {
    forgetClient();
    const failure = toGatewayError(error);
    await call.commit(
      clientSignal.aborted
        ? { status: "aborted", httpStatus: CLIENT_CLOSED }
        : { status: "error", httpStatus: failure.status, errorType: failure.code ?? failure.kind },
    );
    throw failure;
  }
  const { target, first, rest } = routed;
  let failure: string | undefined;

  const body = streamPartsToSse({
    first,
    rest,
    renderer: c.get("dialect").createStreamRenderer(request),
    observe(part) {
      call.observe(part);
      if (part.type === "error") failure = part.error.code ?? part.error.kind;
    },
    // An upstream stopped because the client left ends like a finished one: the abort tells them apart.
    summary: async () => summarizeRecord(await call.settle({ status: upstream.signal.aborted ? "aborted" : "ok", httpStatus: 200 })),
    abortUpstream: stopUpstream,
    onClose(outcome) {
      forgetClient();
      // The status line said 200 before the stream began; how it ended is in the record.
      if (outcome === "completed") void call.commit({ status: "ok", httpStatus: 200 });
      else if (outcome === "cancelled") void call.commit({ status: "aborted", httpStatus: 200 });
      else void call.commit({ status: "error", httpStatus: 200, errorType: failure ?? "upstream" });
    },
  });

  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      // Tell nginx-style proxies in front of tollgate not to buffer the stream either.
      "x-accel-buffering": "no",
      // Without it @hono/node-server waits for a second chunk, up to a timer turn (~1 ms), to see
      // whether the whole body fits a Content-Length; a stream must go out as it comes.
      "transfer-encoding": "chunked",
      "x-tollgate-request-id": c.get("requestId"),
      "x-tollgate-route": request.route,
      "x-tollgate-provider": target.model.providerName,
    },
  });
}
