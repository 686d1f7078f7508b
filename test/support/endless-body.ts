// An upstream body that goes on until the gateway hangs up (or a cap, so that a gateway that
// reads it all still ends the test): for the bounds on what the gateway reads of an upstream.
import type { ServerResponse } from "node:http";
import { expect } from "vitest";
import { until } from "./until.ts";

const PIECE = Buffer.alloc(1024 * 1024, "x");

/** How much of a body was written, and whether the gateway hung up before its cap. */
export type EndlessBody = { written: number; cutOff: boolean; cap: number };

/** Writes `prefix`, then 1 MiB pieces as fast as the gateway reads, until it hangs up (or `cap`). */
export function endlessBody(response: ServerResponse, status: number, contentType: string, prefix: string, cap: number): EndlessBody {
  const sent: EndlessBody = { written: 0, cutOff: false, cap };
  response.on("close", () => (sent.cutOff = !response.writableFinished));
  response.writeHead(status, { "content-type": contentType });
  response.write(prefix);
  const more = () => {
    while (!response.destroyed && sent.written < cap) {
      sent.written += PIECE.length;
      if (!response.write(PIECE)) return void response.once("drain", more);
    }
    if (!response.destroyed) response.end();
  };
  more();
  return sent;
}

/** The gateway hung up on the body instead of reading (and keeping) all it would send. */
export async function cutOffEarly(sent: EndlessBody): Promise<void> {
  await until(() => sent.cutOff, "the gateway to close the upstream's connection");
  expect(sent.written).toBeLessThan(sent.cap);
}

/** The opening of an answer's JSON whose text then never ends. */
export const ANSWER_OPENING = '{"id":"answer-1","choices":[{"index":0,"message":{"role":"assistant","content":"';
