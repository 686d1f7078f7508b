import { GatewayError } from "../errors/gateway-error.ts";

/**
 * Reads the body as JSON within the size limit. A declared Content-Length is checked before a
 * byte is read, then the body is read in one call (on Node this is @hono/node-server's fast
 * path; touching `request.body` instead would build a WHATWG stream, which cost ~10% of the
 * gateway's CPU in the benchmark — that is why hono's bodyLimit middleware is not used here).
 * A chunked body is counted as it streams in.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  // A compressed body would be read as JSON and refused with its bytes quoted back; say why instead.
  const encoding = request.headers.get("content-encoding");
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity") {
    throw new GatewayError("unsupported_media_type", `the request body is sent with Content-Encoding: ${encoding}, which tollgate does not read: send it uncompressed`);
  }
  const declared = request.headers.get("content-length");
  let text: string;
  if (declared !== null && !request.headers.has("transfer-encoding")) {
    if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
    text = await request.text();
  } else {
    text = await readLimited(request, maxBytes);
  }
  if (text.trim() === "") throw new GatewayError("invalid_request", "the request body is empty: send a JSON object");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new GatewayError("invalid_request", `the request body is not valid JSON: ${(error as Error).message}`);
  }
  // Nesting past MAX_DEPTH takes an opening and a closing bracket per level: shorter bodies (most
  // chat requests) cannot have it and skip the walk.
  const tooDeep = text.length > 2 * MAX_DEPTH ? findTooDeep(body) : undefined;
  if (tooDeep !== undefined) {
    const message = `${tooDeep} nests objects and arrays more than ${MAX_DEPTH} levels deep; send that field with fewer levels`;
    throw new GatewayError("invalid_request", message, { param: tooDeep });
  }
  return body;
}

/**
 * Deeper JSON is refused before anything reads it. The free-form fields (tool parameters, a
 * response schema, a tool call's input) take any JSON, and JSON.stringify and every other
 * recursive walk on the request path overflow the stack at a few thousand levels: a 40 kB body
 * was a 500. No real request comes near this depth.
 */
export const MAX_DEPTH = 128;

type Node = { value: object; depth: number; key: string | number; parent: Node | undefined };

/** The path of the first value deeper than MAX_DEPTH, walked without recursion. */
function findTooDeep(body: unknown): string | undefined {
  const pending: Node[] = [];
  const visit = (value: unknown, key: string | number, parent: Node | undefined) => {
    if (typeof value === "object" && value !== null) pending.push({ value, depth: parent ? parent.depth + 1 : 0, key, parent });
  };
  visit(body, "", undefined);
  for (let node = pending.pop(); node; node = pending.pop()) {
    if (node.depth === MAX_DEPTH) return pathOf(node);
    if (Array.isArray(node.value)) for (let index = 0; index < node.value.length; index++) visit(node.value[index], index, node);
    else for (const key in node.value) visit((node.value as Record<string, unknown>)[key], key, node);
  }
  return undefined;
}

/** The field a client would look for: its first steps from the top (`tools[0].function.parameters.x[0]…`). */
function pathOf(node: Node): string {
  const keys: (string | number)[] = [];
  for (let at: Node | undefined = node; at?.parent; at = at.parent) keys.unshift(at.key);
  const shown = keys.slice(0, 6).map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? key : `.${key}`));
  return shown.join("") + (keys.length > shown.length ? "…" : "");
}

async function readLimited(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return "";
  const decoder = new TextDecoder();
  const reader = request.body.getReader();
  let size = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    text += decoder.decode(value, { stream: true });
  }
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError("request_too_large", `the request body is over ${maxBytes} bytes; send less, or raise server.maxBodyBytes in the config`);
}
