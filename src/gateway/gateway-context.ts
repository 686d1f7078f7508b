import type { Caller } from "../auth/authenticate.ts";
import type { Dialect } from "../dialects/dialect.ts";

// Per-request state shared by the middleware and handlers, typed through Hono's variable map.
export type GatewayVariables = {
  requestId: string;
  dialect: Dialect;
  /** performance.now() when the request arrived: the zero of every timing tollgate reports. */
  receivedAt: number;
  caller: Caller;
};

export type GatewayEnv = { Variables: GatewayVariables };
