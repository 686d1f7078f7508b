// A node:http stand-in for a local decoder's POST /v1/chat/completions, for wire shapes the tiny
// real llama-server cannot produce (reasoning deltas, vLLM's engine aborts). Each test scripts the
// answer; `requests` keeps the bodies the gateway sent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type FakeDecoder = {
  baseUrl: string;
  requests: Record<string, unknown>[];
  /** The path of each request, in the order of `requests`. */
  paths: string[];
  handle: (request: Record<string, unknown>, response: ServerResponse) => void;
  /** Whether the last connection was closed by the gateway before the answer was complete. */
  lastClosedEarly(): boolean;
  close(): Promise<void>;
};

export async function startFakeDecoder(): Promise<FakeDecoder> {
  const closedEarly: boolean[] = [];
  const fake = {
    requests: [] as Record<string, unknown>[],
    paths: [] as string[],
    handle: (_request: Record<string, unknown>, response: ServerResponse) => void response.end(),
  } as FakeDecoder;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const index = closedEarly.push(false) - 1;
    response.on("close", () => (closedEarly[index] = !response.writableFinished));
    let text = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (text += chunk));
    request.on("end", () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      fake.requests.push(body);
      fake.paths.push(request.url ?? "");
      fake.handle(body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.lastClosedEarly = () => closedEarly.at(-1) === true;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** One `data:` event of a chat.completion.chunk, as llama-server and vLLM frame it. */
export function chunk(id: string, delta: Record<string, unknown> | null, finish: string | null = null, extra: Record<string, unknown> = {}): string {
  const choices = delta === null ? [] : [{ index: 0, delta, finish_reason: finish }];
  return `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: "fake-model", choices, ...extra })}\n\n`;
}

/**
 * A whole chat.completion as llama-server and vLLM send it. `extra` adds top-level fields (usage),
 * `choiceExtra` fields of the choice (vLLM's stop_reason).
 */
export function completion(id: string, message: Record<string, unknown>, finish: string, extra: Record<string, unknown> = {}, choiceExtra: Record<string, unknown> = {}): string {
  return JSON.stringify({ id, object: "chat.completion", created: 1, model: "fake-model", choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish, ...choiceExtra }], ...extra });
}

/** Answers 200 with a JSON body (a completion). */
export function sendJson(response: ServerResponse, body: string): void {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(body);
}
