import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// Anthropic's inference_geo: "us" keeps inference in the US and is billed at 1.1× every token
// price (platform.claude.com/docs/en/build-with-claude/data-residency; the answer's
// usage.inference_geo says where it ran, also when the workspace's default chose it). Was: the
// field was dropped, so a data-residency request ran wherever Anthropic chose.
//
// Costs by hand, claude-sonnet-4-6 ($3 / $15 per 1M tokens), 1,000 input + 100 output tokens:
//   global: 3,000,000 + 1,500,000 = 4,500,000 nano-dollars;  us: 3,300,000 + 1,650,000 = 4,950,000.

const rig = useMockedGateway(
  {
    capped: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], maxCostPerRequestUsd: 0.000001 },
    // A Claude model the price list does not know (priced in config) is taken to be a later one.
    "capped-later": { targets: [{ provider: "anthropic", model: "claude-opus-5" }], maxCostPerRequestUsd: 0.000001 },
    // One the list knows to predate US-only inference (it refuses inference_geo).
    "capped-older": { targets: [{ provider: "anthropic", model: "claude-haiku-4-5" }], maxCostPerRequestUsd: 0.000001 },
  },
  [],
  { anthropic: { pricing: { models: { "claude-opus-5": { inputPerMillion: 5, outputPerMillion: 25 } } } } },
);
const usage = { input_tokens: 1000, output_tokens: 100 };
const ask = (fields: Record<string, unknown>, model = "claude") =>
  postJson(rig.gateway, "/v1/messages", { model, max_tokens: 200, messages: [{ role: "user", content: "Where do you run?" }], ...fields });
const recordOf = (response: Response) => waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);

describe("inference_geo", () => {
  it('"us" reaches Claude, and the record bills 1.1× and says where inference ran', async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", usage });
    const response = await ask({ inference_geo: "us" });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.inference_geo).toBe("us");
    const record = await recordOf(response);
    expect(record.cost).toMatchObject({ inputNano: 3_300_000, outputNano: 1_650_000, totalNano: 4_950_000 });
    expect(record.inferenceGeo).toBe("us");
  });

  it('"us" streamed: the same cost, from message_start\'s usage', async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", usage });
    const response = await ask({ inference_geo: "us", stream: true });
    await response.text();
    const record = await recordOf(response);
    expect(record.cost.totalNano).toBe(4_950_000);
    expect(record.inferenceGeo).toBe("us");
  });

  it("a workspace whose default is the US is billed so too, from what the answer's usage says", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", usage: { ...usage, inference_geo: "us" } });
    const record = await recordOf(await ask({}));
    expect(rig.mocks.anthropic.requests.at(-1)!.body).not.toHaveProperty("inference_geo");
    expect(record.cost.totalNano).toBe(4_950_000);
  });

  it("a geography the answer names that tollgate has no price for (a workspace's default) is recorded with a warning", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", usage: { ...usage, inference_geo: "eu" } });
    const record = await recordOf(await ask({}));
    expect(record.inferenceGeo).toBe("eu");
    expect(record.cost.totalNano).toBe(4_500_000);
    expect(record.warnings.join("\n")).toContain('the provider says inference ran in "eu", which may be billed above the global price this cost is computed at');
  });

  it('"global" costs the list price, and the record names no geography', async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", usage });
    const record = await recordOf(await ask({ inference_geo: "global" }));
    expect(record.cost.totalNano).toBe(4_500_000);
    expect(record).not.toHaveProperty("inferenceGeo");
  });

  it("admission reserves the US price: the worst case of a US request is 1.1× the global one", async () => {
    const worstCase = async (fields: Record<string, unknown>) => {
      const response = await ask(fields, "capped");
      expect(response.status).toBe(400);
      const usd = /could cost up to \$([0-9.]+),/.exec((await response.json()).error.message)![1]!;
      return Math.round(Number(usd) * 1e9);
    };
    expect((await worstCase({ inference_geo: "us" })) * 10).toBe((await worstCase({ inference_geo: "global" })) * 11);
  });

  it("admission reserves the US price where the request names no geography: the workspace's default may be the US", async () => {
    // Was: the global price, and a hard budget was overspent by the 10% the answer's usage then billed.
    const worstCase = async (fields: Record<string, unknown>) => {
      const response = await ask(fields, "capped");
      return /could cost up to \$([0-9.]+),/.exec((await response.json()).error.message)![1];
    };
    expect(await worstCase({})).toBe(await worstCase({ inference_geo: "us" }));
  });

  it("the same on a Claude model the price list does not know, and not on one it knows to predate US-only inference", async () => {
    const worstCase = async (model: string, fields: Record<string, unknown>) => {
      const response = await ask(fields, model);
      return Math.round(Number(/could cost up to \$([0-9.]+),/.exec((await response.json()).error.message)![1]) * 1e9);
    };
    expect((await worstCase("capped-later", {})) * 10).toBe((await worstCase("capped-later", { inference_geo: "global" })) * 11);
    expect(await worstCase("capped-older", {})).toBe(await worstCase("capped-older", { inference_geo: "global" }));
  });

  // A data-residency rule cannot be honoured where the field is not taken: only Claude takes it.
  it('"us" makes a route pass over an OpenAI target to its Claude one, or is a 400 naming inference_geo', async () => {
    const passed = await ask({ inference_geo: "us" }, "gpt-then-claude");
    expect(passed.status).toBe(200);
    expect(passed.headers.get("x-tollgate-provider")).toBe("anthropic");
    const refused = await ask({ inference_geo: "us" }, "gpt");
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toBe("inference_geo: gpt-4o (openai) cannot be asked to keep inference in the US: remove inference_geo, or route this request to a Claude model");
    expect(rig.mocks.openai.requests).toHaveLength(0);
    expect((await ask({ inference_geo: "global" }, "gpt")).status).toBe(200);
  });

  it("a geography tollgate has no price for is a 400 naming the ones it has, before Claude is called", async () => {
    const response = await ask({ inference_geo: "eu" });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toBe('inference_geo: tollgate prices inference in "global" and "us" only: write one of those, or remove inference_geo');
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});
