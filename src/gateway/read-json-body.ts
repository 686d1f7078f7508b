import { GatewayError } from "../errors/gateway-error.ts";

/** Reads the body as JSON; the size limit was already enforced by the body-limit middleware. */
export async function readJsonBody(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") throw new GatewayError("invalid_request", "the request body is empty: send a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new GatewayError("invalid_request", `the request body is not valid JSON: ${(error as Error).message}`);
  }
}
