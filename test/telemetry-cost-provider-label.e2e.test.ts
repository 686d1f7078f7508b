// The `tollgate.cost` counter is by route, team, key, model and provider, where "provider" is
// the provider's name in config, as in the record, `x-tollgate-provider` and the Redis
// aggregates. gen_ai.provider.name is the provider's TYPE, so two OpenAI accounts (a fallback
// from one to the other, here) used to add to one series that no longer matched the ledger.
import { describe, expect, it } from "vitest";
import { testConfig, waitForRecord } from "./support/gateway.ts";
import { decodeAttributes } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

const rig = useTelemetryGateway();
const { receiver } = rig;

describe("tollgate.cost by provider", () => {
  it("tells two providers of the same type apart, as the cost record does", async () => {
    const base = testConfig();
    const { gateway, openai } = await rig.start({
      ...base,
      providers: { ...base.providers, "openai-batch": { type: "openai", apiKey: { env: "OPENAI_API_KEY" } } },
      routes: {
        ...base.routes,
        spread: { targets: [{ provider: "openai", model: "gpt-4o" }, { provider: "openai-batch", model: "gpt-4o" }] },
      },
    });
    // First request: the first provider answers. Second: it is down and the second one answers.
    rig.mocks.openai.enqueue({ kind: "text", text: "a", usage: { prompt_tokens: 100, completion_tokens: 10 } });
    rig.mocks.openai.enqueue({ kind: "http-error", status: 503 });
    rig.mocks.openai.enqueue({ kind: "text", text: "b", usage: { prompt_tokens: 100, completion_tokens: 10 } });
    const first = await openai.chat.completions.create({ model: "spread", messages: [{ role: "user", content: "hi" }] }).withResponse();
    const second = await openai.chat.completions.create({ model: "spread", messages: [{ role: "user", content: "hi" }] }).withResponse();
    const firstRecord = await waitForRecord(gateway, first.response.headers.get("x-tollgate-request-id")!);
    const secondRecord = await waitForRecord(gateway, second.response.headers.get("x-tollgate-request-id")!);
    // The ledger bills each provider account for its own answer.
    expect([firstRecord.provider, secondRecord.provider]).toEqual(["openai", "openai-batch"]);
    // 100 × 2500 + 10 × 10,000 = 350,000 nano-dollars each.
    expect([firstRecord.cost.totalNano, secondRecord.cost.totalNano]).toEqual([350_000, 350_000]);

    await rig.close();
    await receiver.waitFor(() => receiver.received.some((i) => i.path === "/v1/metrics"), "metrics");

    const points = (receiver.metrics().get("tollgate.cost")?.sum?.dataPoints ?? []).map((point) => ({ labels: decodeAttributes(point.attributes), nano: Number(point.asInt) }));
    // Two provider accounts spent money on this route: the counter must keep them apart.
    expect(points, `tollgate.cost points: ${JSON.stringify(points)}`).toHaveLength(2);
    // One series per provider account, each with what the ledger billed that account.
    const byProvider = points
      .map(({ labels, nano }) => ({ route: labels["tollgate.route"], provider: labels["tollgate.provider"], providerType: labels["gen_ai.provider.name"], nano }))
      .sort((a, b) => String(a.provider).localeCompare(String(b.provider)));
    expect(byProvider).toEqual([
      { route: "spread", provider: "openai", providerType: "openai", nano: 350_000 },
      { route: "spread", provider: "openai-batch", providerType: "openai", nano: 350_000 },
    ]);
  });
});
