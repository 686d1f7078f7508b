import type { FinishReason } from "../model/stream-part.ts";
import type { Usage } from "../model/usage.ts";

// The one record every metered request leaves behind: what finance bills from. Money is integer
// nano-dollars (1e-9 USD); USD appears only where a person reads it (headers, reports).

export type CostBreakdown = {
  /** Uncached input at the input price. */
  inputNano: number;
  cacheReadNano: number;
  /** 5-minute and 1-hour cache writes together (each at its own price). */
  cacheWriteNano: number;
  /** All output, reasoning included. */
  outputNano: number;
  totalNano: number;
  /** What the cache-read tokens would have cost as uncached input, minus what they did cost. */
  cacheSavingsNano: number;
};

export type RecordStatus =
  /** The answer reached the client whole. */
  | "ok"
  /** The client went away before the answer was complete. */
  | "aborted"
  /** The provider failed (before or during the answer). */
  | "error";

/** The key id and team of the admin key's records; reserved, so no tenant's totals include them. */
export const ADMIN_NAME = "(admin)";

export type CostRecord = {
  requestId: string;
  /** ISO 8601 UTC time the request arrived. */
  time: string;
  /**
   * The admin key's requests say ADMIN_NAME for both (a name the config refuses for keys and
   * teams, so reports never add them to a tenant's), and carry `admin`.
   */
  keyId: string;
  team: string;
  /**
   * The admin key made the request: like live admission, budgets rebuilt from the records charge
   * it to its route only (records written before ADMIN_NAME say "admin", a name a tenant may have).
   */
  admin?: true;
  route: string;
  /** The provider name from config, or "" when no provider was reached. */
  provider: string;
  /** The model asked for (the route target's model). */
  model: string;
  /** The model the provider says answered, when it said. */
  responseModel?: string;
  /**
   * Where the provider says inference ran, when not "global": Anthropic bills "us" at 1.1× every
   * token price, and the cost here includes it.
   */
  inferenceGeo?: string;
  /**
   * OpenAI's service tier that served the call, when not a standard one: "priority" is billed at
   * its own prices, and the cost here is at them where the bundled list has them.
   */
  serviceTier?: string;
  dialect: "openai" | "anthropic";
  stream: boolean;
  status: RecordStatus;
  /** The HTTP status the client saw (200 for a stream that failed after it began). */
  httpStatus: number;
  /** The gateway error kind when status is "error". */
  errorType?: string;
  finishReason?: FinishReason;
  usage: Required<Usage>;
  cost: CostBreakdown;
  /** Milliseconds from the request's arrival to the first content sent to the client. */
  ttftMs: number | null;
  /** Milliseconds from the upstream call's start to its first content. */
  upstreamTtftMs: number | null;
  durationMs: number;
  /** Output tokens per second after the first token (null when it cannot be known). */
  outputTokensPerSecond: number | null;
  /** Some token counts came from tollgate's tokenizer, not the provider. */
  estimated: boolean;
  /** No price was known for this model: cost is 0 here and must not be read as free. */
  unpriced: boolean;
  /** What policies changed on the way (filled in by the policies). */
  policies: string[];
  /** Soft budgets that had not enough left for this request's worst case (a hard one would have refused it): served anyway. */
  softBudgetsExceeded?: string[];
  /**
   * The route's targets that failed before the one this record bills, in order, and why (the
   * error's code or kind): what a fallback hid from the client.
   */
  fallbackFrom?: { provider: string; model: string; errorType: string }[];
  /** Non-fatal notes (e.g. an unpriced model). */
  warnings: string[];
  /**
   * This record is a call that failed but was billed (see BilledCall) before the route moved on
   * to another target: the id of the request, whose own record is the call that answered. Its
   * request id is that id with ".1", ".2"… Daily totals count its tokens and cost, not a request.
   */
  attemptOf?: string;
};
