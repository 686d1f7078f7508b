// A provider's error text may quote the request: vLLM's validation errors repeat the offending
// input, OpenAI's "Invalid value: '…'" the value sent. It was the failed call's span status
// message, so the prompt reached the collector with content capture off (found by review). Now the
// status says only the kind of failure, unless the operator opted in to prompt text, where the
// provider's text is kept, clipped to 1,000 characters.
import { describe, expect, it } from "vitest";
import { testConfig } from "./support/gateway.ts";
import type { OtlpSpan } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

const OTLP_SPAN_KIND_CLIENT = 3;
const SECRET = "ultraviolet pangolin 7741";
const rig = useTelemetryGateway();
const { receiver } = rig;

async function failedChatSpan(): Promise<OtlpSpan> {
  await rig.close();
  await receiver.waitFor(() => receiver.spans().some((span) => span.kind === OTLP_SPAN_KIND_CLIENT), "a CLIENT span");
  return receiver.spans().find((span) => span.kind === OTLP_SPAN_KIND_CLIENT)!;
}

const quotingRefusal = { kind: "http-error", status: 400, type: "invalid_request_error", message: `Invalid value: '${SECRET}'. Supported values are: 'system', 'user'.` } as const;

describe("a failed call's span status", () => {
  it("without content capture: says the kind of failure, and nothing exported holds the provider's text", async () => {
    const { openai } = await rig.start();
    rig.mocks.openai.enqueue(quotingRefusal);
    await expect(openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: SECRET }] })).rejects.toMatchObject({ status: 400 });
    const span = await failedChatSpan();
    expect(span.status).toMatchObject({ code: 2, message: "the call failed: invalid_request" });
    expect(JSON.stringify(receiver.received)).not.toContain(SECRET);
  });

  it("with content capture: keeps the provider's text, clipped to 1,000 characters", async () => {
    const { openai } = await rig.start({ ...testConfig(), telemetry: { captureContent: true } });
    rig.mocks.openai.enqueue({ ...quotingRefusal, message: `Invalid value: '${SECRET}'. ${"x".repeat(5_000)}` });
    await expect(openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: SECRET }] })).rejects.toMatchObject({ status: 400 });
    const message = (await failedChatSpan()).status?.message ?? "";
    expect(message).toContain(SECRET);
    expect(message).toHaveLength(1_001); // 1,000 characters and the ellipsis
  });
});
