import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { decodeAttributes } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";
import { until } from "./support/until.ts";

// A client that leaves while the call is in flight, before the provider said anything: the
// record bills tollgate's own count of the prompt (flagged estimated), as docs/metering.md says
// the CLIENT span does too. The span used to be ended as the call was cut, before that count was
// made: no gen_ai.usage.* at all, so tokens summed from traces fell short of the bill.

const rig = useTelemetryGateway();
const { receiver } = rig;

describe.each([false, true])("a client that leaves while the call is in flight (stream: %s)", (stream) => {
  it("leaves a CLIENT span with the usage its record bills, flagged estimated", async () => {
    const { openai, ledgerPath } = await rig.start();
    rig.mocks.openai.enqueue({ kind: "stall", afterChunks: 0, headersOnly: true });
    const leave = new AbortController();
    const pending = openai.chat.completions
      .create({ model: "gpt", stream, messages: [{ role: "user", content: "one two three four five six seven eight nine ten" }] }, { signal: leave.signal })
      .catch((error: unknown) => error);
    await until(() => rig.mocks.openai.requests.length > 0, "the upstream call");
    await new Promise((resolve) => setTimeout(resolve, 100));
    leave.abort();
    await pending;
    // Closing lets the request end, writes its record and flushes the SDK to the receiver.
    await rig.close();
    const record = JSON.parse((await readFile(ledgerPath, "utf8")).trim().split("\n").at(-1)!);

    expect(record).toMatchObject({ status: "aborted", estimated: true });
    expect(record.usage.inputTokens).toBeGreaterThan(0);
    const span = await until(() => receiver.spans().find((each) => each.name === "chat gpt-4o"), "the chat span");
    const attributes = decodeAttributes(span.attributes);
    expect(attributes["error.type"]).toBe("cancelled");
    expect(attributes["gen_ai.usage.input_tokens"]).toBe(record.usage.inputTokens);
    expect(attributes["tollgate.usage.estimated"]).toBe(true);
  });
});
