import { sha256Hex } from "../../src/auth/key-hash.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { PolicyLog, PolicyTarget } from "../policy.ts";

// OpenAI takes any string as `user` or `safety_identifier`, and apps put raw emails there.
// Claude gets the id as `metadata.user_id`, which Anthropic refuses when it looks like an email
// (400 "user_id appears to contain an email address. Please send a uuid or hash value…") or is
// over 256 characters; its docs forbid phone numbers too. Sent as is, a request that works on
// OpenAI fails on Claude (and a gpt-then-claude route's fallback with it), with an error naming a
// field the client never sent. Such an id goes to Claude as its sha256 instead: one end user
// still has one id from call to call, which is what abuse tracking needs.
// An Anthropic client's own metadata.user_id goes as sent: the rule and the field are
// Anthropic's, and its refusal names the field the client set.

/** Anthropic's longest user_id. */
const MAX_CLAUDE_USER_ID = 256;

/** True when Anthropic would refuse this id as `metadata.user_id`. */
export function claudeRefusesUserId(id: string): boolean {
  return id.includes("@") || id.length > MAX_CLAUDE_USER_ID || looksLikePhoneNumber(id);
}

/** An international number as apps store one ("+14155552671", "+44 20 7183 8750"). */
function looksLikePhoneNumber(id: string): boolean {
  return /^\+\d{7,15}$/.test(id.replace(/[\s().-]/g, ""));
}

/** For a Claude target: an OpenAI client's end-user id that Anthropic would refuse, hashed, with a note. */
export async function claudeUserId(request: ChatRequest, target: PolicyTarget, log: PolicyLog): Promise<ChatRequest> {
  if (target.providerType !== "anthropic" || request.userFromAnthropic) return request;
  // The adapter's choice: `user`, or `safety_identifier` where no `user` is set.
  const field = request.user !== undefined ? "user" : "safety_identifier";
  const id = request.user ?? request.safetyIdentifier;
  if (!id || !claudeRefusesUserId(id)) return request;
  log.notes.push(`${field}=hashed`);
  // The id itself stays out of the warning: the record is kept, and the id may be an email.
  log.warnings.push(
    `${field} reached ${target.model} as the sha256 of its value: Anthropic refuses an end-user id that looks like an email address or a phone number, or is over ${MAX_CLAUDE_USER_ID} characters`,
  );
  return { ...request, user: await sha256Hex(id) };
}
