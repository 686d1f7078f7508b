import type { Context } from "hono";
import type { CostRecord } from "../metering/cost-record.ts";
import type { MeteredCall } from "../metering/metering.ts";
import type { MeterOutcome } from "../metering/request-meter.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import { answerHeaders } from "./answer-headers.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { jsonResponse } from "./json-response.ts";
import { sseResponse } from "./sse-response.ts";
import { streamPartsToSse, type SseStreamOptions } from "./stream-parts-to-sse.ts";

// How an answer goes to the client, from a provider or from the response cache alike.

const answered = (): MeterOutcome => ({ status: "ok", httpStatus: 200 });

/**
 * An answer in one body: settled now for its headers (its figures, what the budgets have left),
 * handed to the ledger once the body is on its way. `render`: the answer to send, given its record.
 * `cache`: whether it was a response-cache hit or miss, on a caching route.
 */
export async function sendJsonAnswer(c: Context<GatewayEnv>, call: MeteredCall, render: (record: CostRecord) => ChatResponse, cache?: "hit" | "miss"): Promise<Response> {
  const outcome = answered();
  const record = await call.settle(outcome);
  const headers = answerHeaders(c, record);
  if (cache) headers["x-tollgate-cache"] = cache;
  const response = jsonResponse(c.get("dialect").renderResponse(render(record)), 200, c.get("requestId"), headers);
  void call.commit(outcome);
  return response;
}

/**
 * What a stream's record says of how it ended. The status line said 200 before the stream began;
 * how it ended is in the record. A client that left is the reason, whatever the upstream call made
 * of being stopped (an upstream stopped because the client left ends like a finished one).
 * `errorType`: what failed a stream that failed.
 */
export function streamOutcome(how: "completed" | "failed" | "cancelled", { clientLeft = false, errorType }: { clientLeft?: boolean; errorType: string }): MeterOutcome {
  if (how === "cancelled" || clientLeft) return { status: "aborted", httpStatus: 200 };
  return how === "completed" ? answered() : { status: "error", httpStatus: 200, errorType };
}

/** What a streamed answer needs from the server it runs in. */
export type StreamHost = {
  /** How long a stream may be quiet before the client gets a keep-alive (0: never). */
  keepAliveMs: number;
  /** How long a stream waits on a client that takes no bytes before it is cut (0: for ever). */
  sendTimeoutMs: number;
  /** Closes the connection of a client whose stream was cut for taking no bytes, where the host can. */
  dropClient: (() => void) | undefined;
  /** Keeps the request alive until `work` is done (waitUntil on Workers): a stream's record. */
  holdOpen: (work: Promise<unknown>) => void;
};

type StreamParts = Omit<SseStreamOptions, "keepAliveMs" | "sendTimeoutMs" | "dropClient" | "onClose"> & {
  /** Makes the stream's record; the request is held open until it is made. */
  onClose(outcome: "completed" | "failed" | "cancelled"): Promise<unknown>;
};

/**
 * A streamed answer, from a provider or the response cache alike: its parts as SSE, with the
 * host's keep-alive and send timeout (a client that takes no bytes is cut, its record made), and
 * the request kept alive until the stream's record is made. On Workers a client that leaves ends
 * the request at once, unless work is pending: its record and settle would never run.
 */
export function sendStream(streaming: StreamHost, parts: StreamParts, headers: Record<string, string>): Response {
  let recorded = () => {};
  const body = streamPartsToSse({
    ...parts,
    keepAliveMs: streaming.keepAliveMs,
    sendTimeoutMs: streaming.sendTimeoutMs,
    dropClient: streaming.dropClient,
    onClose: (outcome) => void parts.onClose(outcome).then(() => recorded(), () => recorded()),
  });
  const response = sseResponse(body, headers);
  streaming.holdOpen(new Promise<void>((resolve) => (recorded = resolve)));
  return response;
}
