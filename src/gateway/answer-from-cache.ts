import type { Context } from "hono";
import type { CachedAnswer } from "../../policies/response-cache/response-cache.ts";
import { summarizeRecord } from "../dialects/stream-summary.ts";
import type { MeteredCall } from "../metering/metering.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import { responseToParts } from "../model/collect-response.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { streamHeaders } from "./answer-headers.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { sendJsonAnswer, streamOutcome } from "./send-answer.ts";
import { sseResponse } from "./sse-response.ts";
import { streamPartsToSse } from "./stream-parts-to-sse.ts";

// A response-cache hit, answered in the client's dialect and in the form it asked for: the kept
// answer as one body, or replayed as a stream. Recorded at $0, saving what the answer first cost.

export async function answerFromCache(c: Context<GatewayEnv>, request: ChatRequest, call: MeteredCall, hit: CachedAnswer): Promise<Response> {
  call.servedFromCache({ provider: hit.provider, model: hit.model, response: hit.response, savingsNano: hit.costNano });
  if (!request.stream) return sendJsonAnswer(c, call, () => hit.response, "hit");
  const [first, ...rest] = responseToParts(hit.response);
  async function* replay(): AsyncGenerator<StreamPart> {
    yield* rest;
  }
  // A replay fails only by a fault of tollgate's own.
  const closing = (how: "completed" | "failed" | "cancelled") => streamOutcome(how, { errorType: "internal" });
  const body = streamPartsToSse({
    held: [first!],
    rest: replay(),
    renderer: c.get("dialect").createStreamRenderer(request),
    observe: (part) => call.observe(part),
    summary: async (how) => summarizeRecord(await call.settle(closing(how))),
    abortUpstream: () => {},
    onClose: (how) => void call.commit(closing(how)),
  });
  return sseResponse(body, streamHeaders(c, request.route, hit.provider, call.policyNotes(), "hit"));
}
