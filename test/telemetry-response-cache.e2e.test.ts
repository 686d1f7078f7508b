// A response-cache hit is a $0 request: its SERVER span and its tollgate.cost point looked like
// any free request's, and no metric counted hits, so the cache's work could not be seen in
// OpenTelemetry. The SERVER span now says `tollgate.response_cache` (hit or miss) where the cache
// was asked, and `tollgate.response_cache.requests` / `.savings` count it by route and team.
import { describe, expect, it } from "vitest";
import { testConfig, waitForRecord } from "./support/gateway.ts";
import { decodeAttributes, pointWith, type OtlpSpan } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

const rig = useTelemetryGateway();
const { receiver } = rig;
const SERVER = 2;

describe("the response cache in OpenTelemetry", () => {
  it("a miss and a hit say so on their SERVER spans; the requests are counted by outcome, and the hit's savings added", async () => {
    const base = testConfig();
    const { gateway, openai } = await rig.start({
      ...base,
      routes: { ...base.routes, cached: { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { responseCache: { ttlSeconds: 60 } } } },
    });
    rig.mocks.openai.enqueue({ kind: "text", text: "General Kenobi.", usage: { prompt_tokens: 12, completion_tokens: 4 } });
    const ask = (model: string, temperature: number) =>
      openai.chat.completions.create({ model, temperature, max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] }).withResponse();
    // Deterministic on the cached route: a miss, then a hit (the embedded store keeps the answer
    // before the miss's response is sent).
    const miss = await ask("cached", 0);
    const hit = await ask("cached", 0);
    expect([miss.response.headers.get("x-tollgate-cache"), hit.response.headers.get("x-tollgate-cache")]).toEqual(["miss", "hit"]);
    // Not asked: a temperature above 0 on the cached route, and a route without the cache.
    const unasked = await ask("cached", 0.7);
    const uncached = await ask("gpt", 0);
    expect([unasked.response.headers.get("x-tollgate-cache"), uncached.response.headers.get("x-tollgate-cache")]).toEqual([null, null]);
    const ids = [miss, hit, unasked, uncached].map((answer) => answer.response.headers.get("x-tollgate-request-id")!);
    const [missRecord, hitRecord] = await Promise.all(ids.map((id) => waitForRecord(gateway, id)));
    // 12 × 2500 + 4 × 10,000 = 70,000 nano-dollars; the hit costs nothing and saves that.
    expect(missRecord!.cost.totalNano).toBe(70_000);
    expect([hitRecord!.cost.totalNano, hitRecord!.cost.cacheSavingsNano]).toEqual([0, 70_000]);

    await rig.close();
    const arrived = (path: string) => receiver.received.some((item) => item.path === path);
    await receiver.waitFor(() => arrived("/v1/traces") && arrived("/v1/metrics"), "traces and metrics");

    // The SERVER spans carry no request id: they are told apart by their order of arrival.
    const servers = receiver
      .spans()
      .filter((span) => span.kind === SERVER)
      .sort((a, b) => Number(BigInt(a.startTimeUnixNano ?? 0) - BigInt(b.startTimeUnixNano ?? 0)));
    const said = (span: OtlpSpan) => decodeAttributes(span.attributes)["tollgate.response_cache"];
    expect(servers.map((span) => decodeAttributes(span.attributes)["tollgate.route"])).toEqual(["cached", "cached", "cached", "gpt"]);
    expect(servers.map(said)).toEqual(["miss", "hit", undefined, undefined]);

    const metrics = receiver.metrics();
    const requests = metrics.get("tollgate.response_cache.requests")?.sum?.dataPoints ?? [];
    expect(requests).toHaveLength(2);
    expect(Number(pointWith(requests, { "tollgate.route": "cached", "tollgate.team": "search", "tollgate.response_cache": "hit" }).asInt)).toBe(1);
    expect(Number(pointWith(requests, { "tollgate.route": "cached", "tollgate.team": "search", "tollgate.response_cache": "miss" }).asInt)).toBe(1);
    const savings = metrics.get("tollgate.response_cache.savings");
    expect(savings?.unit).toBe("{nanodollar}");
    expect(Number(pointWith(savings?.sum?.dataPoints ?? [], { "tollgate.route": "cached", "tollgate.team": "search" }).asInt)).toBe(70_000);
  });
});
