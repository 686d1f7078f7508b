import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES } from "../adapters/shared/body-bound.ts";
import { sha256 } from "./support/gateway.ts";
import { startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";
import { ANSWER_OPENING, cutOffEarly, endlessBody, type EndlessBody } from "./support/endless-body.ts";
import { until } from "./support/until.ts";
import { bundleWorker, costRecordsInLog, type WorkerBundle, workerLog } from "./support/workers.ts";

// The bounds on an upstream's body (adapters/shared/body-bound.ts) on Workers, whose adapters
// read through workerd's own fetch: an answer that never ends fails at 128 MiB with a 502, billed,
// and a refusal's body is read to 1 MiB; either way the upstream's connection is closed there.

const EDGE_KEY = "tg_edge_key_0123456789";
let fake: FakeDecoder;
let miniflare: Miniflare;
let bundle: WorkerBundle;
const log = workerLog({ stderr: "drop" });
let endless: EndlessBody;

beforeAll(async () => {
  fake = await startFakeDecoder();
  bundle = await bundleWorker();
  const config = {
    providers: { local: { type: "openai-compatible", baseUrl: fake.baseUrl, pricing: { default: { inputPerMillion: 1000, outputPerMillion: 1000 } } } },
    routes: { local: { targets: [{ provider: "local", model: "edge-model" }] } },
    keys: [{ id: "edge", team: "edge", hash: sha256(EDGE_KEY) }],
  };
  miniflare = new Miniflare({ ...bundle.options, bindings: { TOLLGATE_CONFIG: JSON.stringify(config) }, handleRuntimeStdio: log.handleRuntimeStdio });
});

afterAll(async () => {
  await miniflare?.dispose();
  await fake?.close();
  bundle?.remove();
});

async function ask(): Promise<{ status: number; message: string; requestId: string }> {
  const response = await miniflare.dispatchFetch("http://gateway/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${EDGE_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "Say hello" }] }),
  });
  const answer = (await response.json()) as { error: { message: string } };
  return { status: response.status, message: answer.error.message, requestId: response.headers.get("x-tollgate-request-id")! };
}

describe("an upstream whose body never ends, on workerd", () => {
  it("an answer: a 502 naming the provider and the bound, the upstream cut off, billed", async () => {
    fake.handle = (_request, response) => void (endless = endlessBody(response, 200, "application/json", ANSWER_OPENING, MAX_ANSWER_BYTES * 2));
    const cut = await ask();
    await cutOffEarly(endless);
    expect(cut).toMatchObject({ status: 502, message: 'provider "local" sent an answer longer than 128 MiB; tollgate stops reading an answer there' });
    const record = await until(() => costRecordsInLog(log.text()).find((each) => each.requestId === cut.requestId), "the call's cost record");
    expect(record).toMatchObject({ status: "error", estimated: true });
    expect(record.cost.totalNano).toBeGreaterThan(0);
  });

  it("a refusal: its start in the error, the upstream cut off", async () => {
    fake.handle = (_request, response) => void (endless = endlessBody(response, 500, "text/html", "<html><body>upstream exploded ", MAX_ERROR_BODY_BYTES * 32));
    const refused = await ask();
    await cutOffEarly(endless);
    expect(refused.status).toBe(502);
    expect(refused.message).toContain("upstream exploded");
  });
});
