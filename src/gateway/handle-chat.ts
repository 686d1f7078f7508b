import type { Context } from "hono";
import { mayUseRoute, type Caller } from "../auth/authenticate.ts";
import type { RouteConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import type { StreamSummary } from "../dialects/stream-summary.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { mergeUsage, totalInputTokens, type Usage } from "../model/usage.ts";
import type { ProviderSlot } from "../routing/create-chat-models.ts";
import { generateOnRoute, streamOnRoute } from "../routing/route-chat.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { readJsonBody } from "./read-json-body.ts";
import { streamPartsToSse } from "./stream-parts-to-sse.ts";

// The request path, in the order a reader follows it:
// dialect parser → route lookup → router (→ adapter) → stream parts → dialect renderer.
// Policies and metering join this path in later steps, each as one call here.

export type ChatHandlerDeps = { config: ResolvedConfig; slots: Map<string, ProviderSlot> };

export function createChatHandler({ config, slots }: ChatHandlerDeps) {
  return async function handleChat(c: Context<GatewayEnv>): Promise<Response> {
    const request = c.get("dialect").parseRequest(await readJsonBody(c.req.raw, config.server.maxBodyBytes));
    const route = findRoute(config, c.get("caller"), request.route);
    return request.stream ? streamAnswer(c, request, route, slots) : answer(c, request, route, slots);
  };
}

function findRoute(config: ResolvedConfig, caller: Caller, name: string): RouteConfig {
  const route = config.routes[name];
  if (route && mayUseRoute(caller, name)) return route;
  const allowed = Object.keys(config.routes).filter((routeName) => mayUseRoute(caller, routeName));
  if (route) throw new GatewayError("permission", `this key may not use route "${name}"; it may use: ${allowed.join(", ") || "none"}`, { param: "model" });
  throw new GatewayError("not_found", `unknown route "${name}": set model to one of ${allowed.join(", ") || "(no routes)"}`, { param: "model" });
}

async function answer(c: Context<GatewayEnv>, request: ChatRequest, route: RouteConfig, slots: Map<string, ProviderSlot>): Promise<Response> {
  // node-server aborts the request's signal when the client goes away; the upstream call follows.
  const { target, response, upstreamTtftMs } = await generateOnRoute(request, route, slots, c.req.raw.signal);
  const usage = response.usage ?? {};
  c.header("x-tollgate-route", request.route);
  c.header("x-tollgate-provider", target.model.providerName);
  c.header("x-tollgate-input-tokens", String(totalInputTokens(usage)));
  c.header("x-tollgate-output-tokens", String(usage.outputTokens ?? 0));
  c.header("x-tollgate-cached-tokens", String(usage.cacheReadTokens ?? 0));
  c.header("x-tollgate-ttft-ms", upstreamTtftMs.toFixed(1));
  return c.json(c.get("dialect").renderResponse(response) as object);
}

async function streamAnswer(c: Context<GatewayEnv>, request: ChatRequest, route: RouteConfig, slots: Map<string, ProviderSlot>): Promise<Response> {
  // A stream's upstream stops on either sign that the client is gone: the request's signal, or
  // the response body being cancelled when a write to the client fails.
  const upstream = new AbortController();
  const clientSignal = c.req.raw.signal;
  const stopUpstream = () => upstream.abort(new Error("client disconnected"));
  clientSignal.addEventListener("abort", stopUpstream, { once: true });
  const forgetClient = () => clientSignal.removeEventListener("abort", stopUpstream);

  let routed;
  try {
    routed = await streamOnRoute(request, route, slots, upstream.signal);
  } catch (error) {
    forgetClient();
    throw error;
  }
  const { target, first, rest } = routed;
  const receivedAt = c.get("receivedAt");
  let usage: Usage | undefined;
  let firstContentAt: number | undefined;

  const summary = (): StreamSummary => ({
    requestId: c.get("requestId"),
    route: request.route,
    provider: target.model.providerName,
    model: target.modelName,
    inputTokens: usage ? totalInputTokens(usage) : 0,
    outputTokens: usage?.outputTokens ?? 0,
    cachedTokens: usage?.cacheReadTokens ?? 0,
    ttftMs: firstContentAt === undefined ? null : Math.round((firstContentAt - receivedAt) * 10) / 10,
  });

  const body = streamPartsToSse({
    first,
    rest,
    renderer: c.get("dialect").createStreamRenderer(request),
    observe(part: StreamPart) {
      if (part.type === "usage") usage = mergeUsage(usage, part.usage);
      if (firstContentAt === undefined && (part.type === "text-delta" || part.type === "tool-call-start")) firstContentAt = performance.now();
    },
    summary,
    abortUpstream: stopUpstream,
    onClose: forgetClient,
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
