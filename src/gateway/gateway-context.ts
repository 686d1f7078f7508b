import type { Span } from "@opentelemetry/api";
import type { Caller } from "../auth/authenticate.ts";
import type { Ticket } from "../budgets/admission.ts";
import type { Dialect } from "../dialects/dialect.ts";

// Per-request state shared by the middleware and handlers, typed through Hono's variable map.
export type GatewayVariables = {
  requestId: string;
  dialect: Dialect;
  /** performance.now() when the request arrived: the zero of every timing tollgate reports. */
  receivedAt: number;
  caller: Caller;
  /**
   * The request's SERVER span. The middleware ends it when the handler returns, unless a metered
   * call took it over (a stream's span must stay open until its last byte).
   */
  requestSpan: { span: Span; handedOff: boolean };
  /** The request's admission (budgets, rate limits), once it was let through. */
  ticket?: Ticket;
};

export type GatewayEnv = { Variables: GatewayVariables };
