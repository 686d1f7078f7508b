import type { CostRecord } from "../metering/cost-record.ts";
import type { Usage } from "../model/usage.ts";
import { formatUsd } from "../pricing/format-usd.ts";

// The figures tollgate appends to every stream, the same a non-streamed answer carries in its
// x-tollgate-* headers, as an SSE comment line: `: tollgate {...}`. Every SSE reader skips
// comments. Was: a data event after OpenAI's `[DONE]` or Anthropic's `message_stop`, which the
// official SDKs skip but the Vercel AI SDK does not: it read the event as a chunk, failed it,
// and marked every complete streamed answer as an error (ending a streamed tool loop early).
export type StreamSummary = {
  requestId: string;
  route: string;
  provider: string;
  model: string;
  /** Every input token, cached ones included (as x-tollgate-input-tokens). */
  inputTokens: number;
  outputTokens: number;
  /** The part of outputTokens spent on reasoning. */
  reasoningTokens: number;
  cachedTokens: number;
  /** Exact decimal USD. */
  costUsd: string;
  /** What caching saved (prompt-cache reads, or a whole answer from the response cache), USD. */
  cacheSavingsUsd: string;
  /** What the route's policies changed (as x-tollgate-policies). */
  policies: string[];
  ttftMs: number | null;
  /** Counts came from tollgate's tokenizer, not the provider. */
  estimated: boolean;
  /** No price is known for the model: costUsd is 0 but the call was not free. */
  unpriced: boolean;
};

/** The comment line that ends a stream; JSON has no raw line breaks, so it is one line. */
export function summaryComment(summary: StreamSummary): string {
  return `: tollgate ${JSON.stringify(summary)}\n\n`;
}

export function summarizeRecord(record: CostRecord): StreamSummary {
  const { usage } = record;
  return {
    requestId: record.requestId,
    route: record.route,
    provider: record.provider,
    model: record.model,
    inputTokens: usage.inputTokens + usage.cacheReadTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens,
    outputTokens: usage.outputTokens,
    reasoningTokens: usage.reasoningTokens,
    cachedTokens: usage.cacheReadTokens,
    costUsd: formatUsd(record.cost.totalNano),
    cacheSavingsUsd: formatUsd(record.cost.cacheSavingsNano),
    policies: record.policies,
    ttftMs: record.ttftMs,
    estimated: record.estimated,
    unpriced: record.unpriced,
  };
}

/**
 * The usage a stream's body reports when its provider reported none: what tollgate counted and
 * bills, never a zero that a client accounting from `usage` would take for a free request.
 * (Such a provider reported no cache figures either, so all of the input is uncached.)
 */
export function billedUsage(summary: StreamSummary): Usage {
  return {
    inputTokens: summary.inputTokens - summary.cachedTokens,
    cacheReadTokens: summary.cachedTokens,
    outputTokens: summary.outputTokens,
    reasoningTokens: summary.reasoningTokens,
  };
}

/** The same figures as response headers, for answers that are not streamed. */
export function summaryHeaders(summary: StreamSummary): Record<string, string> {
  const headers: Record<string, string> = {
    "x-tollgate-route": summary.route,
    "x-tollgate-provider": summary.provider,
    "x-tollgate-cost-usd": summary.costUsd,
    "x-tollgate-input-tokens": String(summary.inputTokens),
    "x-tollgate-output-tokens": String(summary.outputTokens),
    "x-tollgate-cached-tokens": String(summary.cachedTokens),
    "x-tollgate-ttft-ms": summary.ttftMs === null ? "" : String(summary.ttftMs),
  };
  if (summary.cacheSavingsUsd !== "0") headers["x-tollgate-cache-savings-usd"] = summary.cacheSavingsUsd;
  if (summary.policies.length > 0) headers["x-tollgate-policies"] = summary.policies.join("; ");
  const flags = [summary.estimated ? "estimated" : "", summary.unpriced ? "unpriced" : ""].filter(Boolean);
  if (flags.length > 0) headers["x-tollgate-cost-flags"] = flags.join(",");
  return headers;
}
