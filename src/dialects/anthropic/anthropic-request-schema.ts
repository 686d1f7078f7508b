import { z } from "zod";
import { PRICED_INFERENCE_GEOS, PRICED_INFERENCE_GEOS_TEXT } from "../../pricing/inference-geo.ts";
import { requiredAs } from "../../config/format-config-issues.ts";
import { MAX_TOKENS_BOUND, maxTokensBoundError } from "../max-tokens-bound.ts";

// The subset of the Messages request that tollgate understands. A client's own `cache_control`
// (on blocks, or top-level for automatic caching) goes to Claude as sent; where the client placed
// none, the route's prompt-cache policy may place breakpoints.

const cacheControl = z.object({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() }).nullish();

const textBlock = z.object({ type: z.literal("text"), text: z.string(), cache_control: cacheControl });
const imageBlock = z.object({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    z.object({ type: z.literal("base64"), media_type: z.string(), data: z.string() }),
    z.object({ type: z.literal("url"), url: z.string() }),
  ]),
  cache_control: cacheControl,
});
const toolUseBlock = z.object({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
  cache_control: cacheControl,
});
const toolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z
    .union([
      z.string(),
      z.array(
        z.discriminatedUnion("type", [textBlock, imageBlock], {
          error: 'a tool result\'s block type must be "text" or "image" (tollgate does not carry "document" or "search_result" blocks: send their text as text)',
        }),
      ),
    ])
    .optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
// Claude's thinking from an earlier answer, sent back as it came: only Claude can check it.
const thinkingBlock = z.object({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string({ error: requiredAs("string", "send the thinking block back with the signature it came with") }),
});
const redactedThinkingBlock = z.object({ type: z.literal("redacted_thinking"), data: z.string() });

const contentBlock = z.discriminatedUnion("type", [textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock], {
  error: 'a content block\'s type must be "text", "image", "tool_use", "tool_result", "thinking" or "redacted_thinking" (tollgate does not carry "document" blocks: send a PDF\'s text as text)',
});

const message = z
  .object({
    role: z.enum(["user", "assistant"], { error: 'role must be "user" or "assistant"; put system text in the top-level `system`' }),
    content: z.union([z.string(), z.array(contentBlock)], { error: "write a string or an array of content blocks" }),
  })
  // Anthropic refuses an empty user turn; dropped, it would leave the turn before it unanswered.
  .refine((message) => message.role !== "user" || message.content.length > 0, {
    error: "send at least one content block in a user turn",
    path: ["content"],
  });

/**
 * Tools Anthropic defines and the client runs (platform.claude.com/docs/en/agents-and-tools/
 * tool-use/tool-reference: bash, text_editor, memory, computer): Claude knows their schema, so
 * they come as a versioned type and the client's options for it, with no input_schema.
 */
export const ANTHROPIC_CLIENT_TOOL = /^(bash|text_editor|memory|computer)_\d{8}$/;

// One form for both kinds, so that a bad tool gets one message: what tollgate carries.
const tool = z
  .looseObject({
    // Claude's server tools (web search, code execution, …) run at Anthropic and answer with block
    // types no other target has: tollgate carries tools the client runs itself.
    type: z
      .string()
      .refine((type) => type === "custom" || ANTHROPIC_CLIENT_TOOL.test(type), {
        error: 'tollgate carries only tools your app runs (type "custom" with an input_schema, or Anthropic\'s text_editor, bash, memory and computer tools); Claude\'s server tools (web_search, code_execution, …) are not carried: remove this one',
      })
      .optional(),
    name: z.string().min(1),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()).optional(),
    /** Structured outputs: the input is decoded to input_schema exactly. */
    strict: z.boolean().optional(),
    cache_control: cacheControl,
  })
  .refine((tool) => tool.input_schema !== undefined || (tool.type !== undefined && ANTHROPIC_CLIENT_TOOL.test(tool.type)), {
    error: 'required: the JSON Schema of the tool\'s input, e.g. {"type": "object", "properties": {"city": {"type": "string"}}}',
    path: ["input_schema"],
  });

const toolChoice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal("none") }),
  z.object({ type: z.literal("tool"), name: z.string(), disable_parallel_tool_use: z.boolean().optional() }),
]);

/** Structured outputs' schema: `output_config.format`, and `output_format`, its deprecated form. */
const jsonSchemaFormat = z.object({ type: z.literal("json_schema"), schema: z.record(z.string(), z.unknown()) });

/** A field of Anthropic's that tollgate cannot honour: null (as good as absent) or a 400 saying why. */
const refused = (message: string) => z.null({ error: message }).optional();

// Strict, as Anthropic is ("Extra inputs are not permitted"): a field tollgate does not know may
// change the answer or its price, and stripped, the client got a 200 answered without it. Every
// body field of @anthropic-ai/sdk 1.12's MessageCreateParams (beta ones included) is declared
// here, carried or refused on purpose; its header params (betas, user_profile_id, workspace_id)
// travel as headers.
export const anthropicMessagesRequestSchema = z.strictObject({
  model: z.string({ error: requiredAs("string", "write the name of a tollgate route") }).min(1),
  max_tokens: z.number({ error: requiredAs("number", "write the most output tokens to allow, e.g. 1024") }).int().min(1).max(MAX_TOKENS_BOUND, maxTokensBoundError),
  messages: z.array(message).min(1, { error: "send at least one message" }),
  system: z.union([z.string(), z.array(textBlock)], { error: 'write a string, or an array of text blocks ({"type": "text", "text": "…"})' }).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  metadata: z.object({ user_id: z.string().nullish() }).optional(),
  // Context editing (its beta): Anthropic clears old tool results or thinking before Claude reads
  // the conversation. Passed to Claude as sent (the kinds of edit keep growing).
  // Except a compact edit: Claude answers with a compaction block, which tollgate has no form for
  // (see `compaction` below); dropped, the next turn would compact again and bill it again.
  context_management: z
    .looseObject({
      edits: z
        .array(
          z.looseObject({
            type: z
              .string({ error: requiredAs("string", 'the kind of edit, e.g. "clear_tool_uses_20250919"') })
              .refine((type) => !type.startsWith("compact_"), {
                error: "tollgate does not carry compaction (Claude answers it with a compaction block, which tollgate has no form for): remove this edit; clearing edits such as clear_tool_uses_20250919 are carried",
              }),
          }),
        )
        .optional(),
    })
    .nullish(),
  // The MCP connector (a beta): Anthropic calls the servers' tools itself, as server tools, which
  // tollgate does not carry; stripped, Claude would answer without the tools the app counted on.
  mcp_servers: z
    .array(z.unknown())
    .max(0, { error: "tollgate does not carry the MCP connector (Anthropic calls those tools itself, as server tools): remove mcp_servers, and give Claude the servers' tools as tools your app runs" })
    .nullish(),
  // A compaction request (the SDK tool runner's compactBeforeNextTurn) is answered with a
  // compaction block only, which tollgate has no form for; stripped, it would be billed as an
  // ordinary turn while the app waited for a summary.
  compaction: z
    .null({ error: "tollgate does not carry compaction requests (Claude answers them with a compaction block, which tollgate has no form for): remove compaction, and summarize the conversation with an ordinary request" })
    .optional(),
  // Automatic prompt caching: Anthropic puts the breakpoint on the last cacheable block.
  cache_control: cacheControl,
  // "standard_only" keeps the request off priority capacity; "auto" is the default.
  service_tier: z.enum(["auto", "standard_only"], { error: 'write "auto" or "standard_only"' }).optional(),
  // Where inference runs: "us" is billed at 1.1× (src/pricing/inference-geo.ts). Fast mode is
  // billed at a premium tollgate has no price for, and a record priced below the invoice is worse
  // than a 400.
  inference_geo: z
    .enum(PRICED_INFERENCE_GEOS, { error: `tollgate prices inference in ${PRICED_INFERENCE_GEOS_TEXT} only: write one of those, or remove inference_geo` })
    .nullish(),
  speed: z
    .literal("standard", { error: 'tollgate prices answers at standard speed, and fast mode costs more: remove speed, or write "standard"' })
    .nullish(),
  // Structured outputs (the SDK's messages.parse()): the answer must conform to the schema.
  // Strict, as the top level is: a field of it stripped would change how Claude answers in silence.
  output_config: z
    .strictObject({
      format: jsonSchemaFormat.nullish(),
      // How eagerly Claude spends tokens; the levels differ per model (low … max), so the model checks them.
      effort: z.string().regex(/^[a-z]{1,16}$/, { error: 'write an effort level the model takes, such as "low", "medium" or "high"' }).nullish(),
      // A token budget for a whole agentic task (a beta), which paces Claude: not carried.
      task_budget: z.null({ error: "tollgate does not carry a task budget (it paces Claude across a task, which a route's other targets cannot): remove it" }).optional(),
    })
    .optional(),
  // Its deprecated form (the structured-outputs beta's), still sent by pydantic-ai and raw HTTP
  // clients: read as output_config.format, which means the same.
  output_format: jsonSchemaFormat.nullish(),
  // Asks Anthropic why a prompt-cache prefix missed; that reason comes in a field of the answer
  // tollgate has no form for, and it changes neither the answer nor its price: accepted, not sent.
  diagnostics: z.object({ previous_message_id: z.string().nullish() }).nullish(),
  // Server-side fallback: Anthropic retries a refused request on other Claude models, billed as
  // theirs. Stripped, a refusal stayed a refusal without a word.
  fallbacks: refused("tollgate does not carry Anthropic's server-side fallback: a tollgate route's targets are its fallbacks; remove fallbacks, and list the models as the route's targets"),
  fallback_credit_token: refused("tollgate does not carry Anthropic's server-side fallback or its credits: remove fallback_credit_token"),
  // Server-held conversation state; a thread to create or continue is refused before parsing
  // (parse-anthropic-request.ts), with the error code Anthropic's SDK knows.
  thread: z.null().optional(),
  // Billing the customer behind a user profile: tollgate calls Anthropic with the platform's own
  // key and records the cost against the caller's team. "self" is the default, and changes nothing.
  billing_policy: z
    .object({
      type: z.literal("billing_policy"),
      bill_to: z.literal("self", { error: 'tollgate calls Claude with its own Anthropic key and records the cost against your team, so it cannot bill a user profile: remove billing_policy, or write "bill_to": "self"' }).optional(),
    })
    .nullish(),
  // A code-execution container: for Claude's server tools, which tollgate does not carry.
  container: refused("tollgate does not carry Claude's server tools, so there is no code-execution container to use: remove container"),
  // Extended or adaptive thinking, or "disabled": passed to Anthropic targets as sent (they check
  // the fields, whose kinds keep growing); other targets drop it with a warning.
  thinking: z
    .looseObject({ type: z.string({ error: requiredAs("string", 'the kind of thinking, e.g. {"type": "enabled", "budget_tokens": 2048}') }) })
    .nullish(),
});

export type AnthropicMessagesRequest = z.infer<typeof anthropicMessagesRequestSchema>;
