import type { Context } from "hono";
import { mayUseRoute } from "../auth/authenticate.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import type { StreamSummary } from "../dialects/stream-summary.ts";
import { GatewayError } from "../errors/gateway-error.ts";
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
    const dialect = c.get("dialect");
    const caller = c.get("caller");
    const request = dialect.parseRequest(await readJsonBody(c.req.raw, config.server.maxBodyBytes));

    const route = config.routes[request.route];
    if (!route || !mayUseRoute(caller, request.route)) {
      const allowed = Object.keys(config.routes).filter((name) => mayUseRoute(caller, name));
      if (route) throw new GatewayError("permission", `this key may not use route "${request.route}"; it may use: ${allowed.join(", ") || "none"}`, { param: "model" });
      throw new GatewayError("not_found", `unknown route "${request.route}": set model to one of ${allowed.join(", ") || "(no routes)"}`, { param: "model" });
    }

    // The upstream call stops when the client goes away (node-server aborts the request's signal).
    const upstream = new AbortController();
    const clientSignal = c.req.raw.signal;
    const onClientGone = () => upstream.abort(new Error("client disconnected"));
    clientSignal.addEventListener("abort", onClientGone, { once: true });

    if (!request.stream) {
      try {
        const { target, response, upstreamTtftMs } = await generateOnRoute(request, route, slots, upstream.signal);
        const usage = response.usage ?? {};
        c.header("x-tollgate-route", request.route);
        c.header("x-tollgate-provider", target.model.providerName);
        c.header("x-tollgate-input-tokens", String(totalInputTokens(usage)));
        c.header("x-tollgate-output-tokens", String(usage.outputTokens ?? 0));
        c.header("x-tollgate-cached-tokens", String(usage.cacheReadTokens ?? 0));
        c.header("x-tollgate-ttft-ms", upstreamTtftMs.toFixed(1));
        return c.json(dialect.renderResponse(response) as object);
      } finally {
        clientSignal.removeEventListener("abort", onClientGone);
      }
    }

    let routed;
    try {
      routed = await streamOnRoute(request, route, slots, upstream.signal);
    } catch (error) {
      clientSignal.removeEventListener("abort", onClientGone);
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
      renderer: dialect.createStreamRenderer(request),
      observe(part: StreamPart) {
        if (part.type === "usage") usage = mergeUsage(usage, part.usage);
        if (firstContentAt === undefined && (part.type === "text-delta" || part.type === "tool-call-start")) firstContentAt = performance.now();
      },
      summary,
      abortUpstream: onClientGone,
      onClose: () => clientSignal.removeEventListener("abort", onClientGone),
    });

    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        // Tell nginx-style proxies in front of tollgate not to buffer the stream either.
        "x-accel-buffering": "no",
        "x-tollgate-request-id": c.get("requestId"),
        "x-tollgate-route": request.route,
        "x-tollgate-provider": target.model.providerName,
      },
    });
  };
}
