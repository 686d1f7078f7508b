import type { Context } from "hono";
import type { CostRecord } from "../metering/cost-record.ts";
import type { MeteredCall } from "../metering/metering.ts";
import type { MeterOutcome } from "../metering/request-meter.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import { answerHeaders } from "./answer-headers.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { jsonResponse } from "./json-response.ts";

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
