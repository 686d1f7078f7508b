import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// An OpenAI client's end-user id reaches Claude as metadata.user_id. OpenAI takes any string
// there (apps put emails in `user`); Anthropic refuses one that looks like an email, or is over
// 256 characters. Was: sent as is, so the request worked on OpenAI and was a 400 from Claude
// naming metadata.user_id, a field the client never sent, and a gpt-then-claude fallback failed
// with it. Now such an id reaches Claude as its sha256, with a note.

const rig = useMockedGateway();
const sentToClaude = () => rig.mocks.anthropic.requests.at(-1)!.body as { metadata?: { user_id?: string } };
const hi = [{ role: "user" as const, content: "hi" }];
const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

describe("OpenAI `user` → Claude metadata.user_id", () => {
  it("an email reaches Claude as its sha256, with a note and a warning that do not repeat it", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: hi, user: "alice@example.com" });
    expect(response.status).toBe(200);
    expect(sentToClaude().metadata).toEqual({ user_id: sha256Hex("alice@example.com") });
    expect(response.headers.get("x-tollgate-policies")).toContain("user=hashed");
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.warnings.join("\n")).toContain("user reached claude-sonnet-4-6 as the sha256 of its value");
    expect(JSON.stringify(record)).not.toContain("alice@example.com");
  });

  it("one over 256 characters, and a phone number, reach Claude hashed too", async () => {
    for (const user of ["u".repeat(300), "+1 415 555 2671"]) {
      const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: hi, user });
      expect(response.status).toBe(200);
      expect(sentToClaude().metadata).toEqual({ user_id: sha256Hex(user) });
    }
  });

  it("a safety_identifier holding an email is hashed and named as such", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: hi, safety_identifier: "bob@example.com" });
    expect(response.status).toBe(200);
    expect(sentToClaude().metadata).toEqual({ user_id: sha256Hex("bob@example.com") });
    expect(response.headers.get("x-tollgate-policies")).toContain("safety_identifier=hashed");
  });

  it("an id Claude takes goes as is, without a note", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: hi, user: "user-7f3a" });
    expect(sentToClaude().metadata).toEqual({ user_id: "user-7f3a" });
    expect(response.headers.get("x-tollgate-policies") ?? "").not.toContain("hashed");
  });

  it("on a gpt-then-claude route, OpenAI gets the email and the fallback to Claude its hash", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 500 });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt-then-claude", messages: hi, user: "alice@example.com" });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.user).toBe("alice@example.com");
    expect(sentToClaude().metadata).toEqual({ user_id: sha256Hex("alice@example.com") });
  });
});

describe("an Anthropic client's own metadata.user_id", () => {
  it("reaches Claude as sent, and Anthropic's refusal of an email names the field the client set", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 64, messages: hi, metadata: { user_id: "alice@example.com" } });
    expect(sentToClaude().metadata).toEqual({ user_id: "alice@example.com" });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("metadata.user_id");
  });
});
