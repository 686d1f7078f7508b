import type { Context } from "hono";
import type { CachedAnswer } from "../../policies/response-cache/response-cache.ts";
import { summarizeRecord } from "../dialects/stream-summary.ts";
import type { MeteredCall } from "../metering/metering.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import { responseToParts } from "../model/collect-response.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { streamHeaders } from "./answer-headers.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { sendJsonAnswer, sendStream, streamOutcome, type StreamHost } from "./send-answer.ts";

// A response-cache hit, answered in the client's dialect and in the form it asked for: the kept
// answer as one body, or replayed as a stream. Recorded at $0, saving what the answer first cost.

export async function answerFromCache(c: Context<GatewayEnv>, request: ChatRequest, call: MeteredCall, hit: CachedAnswer, streaming: StreamHost): Promise<Response> {
  call.servedFromCache({ provider: hit.provider, model: hit.model, response: hit.response, savingsNano: hit.costNano });
  if (!request.stream) return sendJsonAnswer(c, call, () => hit.response, "hit");
  const [first, ...rest] = responseToParts(hit.response);
  async function* replay(): AsyncGenerator<StreamPart> {
    yield* rest;
  }
  // A replay fails only by a fault of tollgate's own.
  const closing = (how: "completed" | "failed" | "cancelled") => streamOutcome(how, { errorType: "internal" });
  const headers = streamHeaders(c, request.route, hit.provider, call.policyNotes(), "hit");
  // Sent as a provider's stream is (see sendStream): a client that stops reading is cut and the
  // hit recorded, and the request is kept alive until its record is made. Was: neither, so a
  // Worker could end before a replay's record, and a client that read nothing of a replay too
  // long to buffer held its budget reservation for as long as its connection lasted.
  return sendStream(
    streaming,
    {
      held: [first!],
      rest: replay(),
      renderer: c.get("dialect").createStreamRenderer(request),
      observe: (part) => call.observe(part),
      summary: async (how) => summarizeRecord(await call.settle(closing(how))),
      abortUpstream: () => {},
      onClose: (how) => call.commit(closing(how)),
    },
    headers,
  );
}
