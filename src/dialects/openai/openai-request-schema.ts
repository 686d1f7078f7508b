import { z } from "zod";
import { requiredAs } from "../../config/format-config-issues.ts";
import { MAX_TOKENS_BOUND, maxTokensBoundError } from "../max-tokens-bound.ts";

// The Chat Completions request as tollgate reads it. Every body field of the openai SDK's
// ChatCompletionCreateParams (6.x) is declared here: carried, dropped with a note where a target
// lacks it, accepted and ignored where it changes neither the answer nor its record
// (`stream_options.include_obfuscation`), or refused with a message where tollgate cannot honour
// it (n > 1, legacy functions); so are the local decoders' own options. Any other top-level field
// is a 400 naming it, as OpenAI answers one ("Unrecognized request argument supplied"): stripped,
// an option the app counts on would not reach the model, and the app could not tell.

// gpt-5.6's explicit prompt-cache breakpoint on a content part: it sets where OpenAI caches, and
// so what the next request with that prefix costs. tollgate carries none (stripped, the app saw a
// 200 and an uncached prefix), so a part that has one is refused, as explicit mode is.
const promptCacheBreakpoint = z
  .undefined({ error: "tollgate does not carry OpenAI's explicit prompt-cache breakpoints: remove prompt_cache_breakpoint, and OpenAI caches the prefix implicitly (prompt_cache_key sends requests that share it to the same cache)" })
  .optional();

const textPart = z.object({ type: z.literal("text"), text: z.string(), prompt_cache_breakpoint: promptCacheBreakpoint });
const imagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.object({ url: z.string(), detail: z.enum(["auto", "low", "high"]).optional() }),
  prompt_cache_breakpoint: promptCacheBreakpoint,
});
const refusalPart = z.object({ type: z.literal("refusal"), refusal: z.string() });

const USER_PART_TYPES =
  'a content part\'s type must be "text" or "image_url" (tollgate does not carry "file" or "input_audio" parts: send a document\'s text as text, and transcribe audio first)';

const textContent = z.union([z.string(), z.array(textPart)], {
  error: "write a string or an array of {type: \"text\", text} parts",
});

const toolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const message = z.discriminatedUnion(
  "role",
  [
    z.object({ role: z.literal("system"), content: textContent, name: z.string().optional() }),
    z.object({ role: z.literal("developer"), content: textContent, name: z.string().optional() }),
    z.object({
      role: z.literal("user"),
      content: z.union([z.string(), z.array(z.discriminatedUnion("type", [textPart, imagePart], { error: USER_PART_TYPES }))], {
        error: 'write a string or an array of {type: "text"} / {type: "image_url"} parts',
      }),
      name: z.string().optional(),
    }),
    z.object({
      role: z.literal("assistant"),
      content: z.union([z.string(), z.array(z.discriminatedUnion("type", [textPart, refusalPart]))]).nullish(),
      // A refused answer as the SDK returns it (content null), which apps put back in the history.
      refusal: z.string().nullish(),
      tool_calls: z.array(toolCall).optional(),
      name: z.string().optional(),
    }),
    z.object({ role: z.literal("tool"), tool_call_id: z.string(), content: textContent }),
  ],
  { error: 'role must be one of "system", "developer", "user", "assistant", "tool"' },
);

const tool = z.object({
  type: z.literal("function", { error: 'tollgate carries function tools only (type "function", with JSON Schema parameters); "custom" tools with free-form input are not carried' }),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

const toolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  z.object({
    type: z.literal("function", { error: 'write "auto", "none", "required" or {"type": "function", "function": {"name": …}} (tollgate does not carry "allowed_tools": send only the tools the model may call)' }),
    function: z.object({ name: z.string() }),
  }),
]);

const responseFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    json_schema: z.object({
      name: z.string(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullish(),
      description: z.string().optional(),
    }),
  }),
]);

const positiveInt = z.number().int().min(1);

export const openAIChatRequestSchema = z.strictObject({
  model: z.string({ error: requiredAs("string", "write the name of a tollgate route") }).min(1),
  messages: z.array(message).min(1, { error: "send at least one message" }),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: positiveInt.max(MAX_TOKENS_BOUND, maxTokensBoundError).nullish(),
  max_completion_tokens: positiveInt.max(MAX_TOKENS_BOUND, maxTokensBoundError).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  // Local decoders' extensions (vLLM, llama-server); dropped for clouds that lack them.
  top_k: z.number().int().min(0).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  // vLLM's and SGLang's own sampling options (src/model/chat-request.ts, DecoderOptions).
  repetition_penalty: z.number().gt(0, { error: "above 0: 1 leaves the answer as it is, above 1 repeats less" }).nullish(),
  min_tokens: z.number().int().min(0).nullish(),
  ignore_eos: z.boolean().nullish(),
  stop_token_ids: z.array(z.number().int().min(0)).nullish(),
  // A template is the decoder operator's, never request data: one sent here replaces the server's
  // in vLLM before 0.11 (GHSA-6fvq-23cw-5628), and a Jinja loop in it pins the decoder's CPU for
  // every tenant. Template flags (Qwen3's enable_thinking) are carried.
  chat_template_kwargs: z
    .record(z.string(), z.unknown())
    .refine((kwargs) => !Object.hasOwn(kwargs, "chat_template"), {
      error: "tollgate does not carry a chat template from a request: the decoder's operator sets it; remove chat_template and keep only the template's flags (such as enable_thinking)",
      path: ["chat_template"],
    })
    .nullish(),
  seed: z.number().int().nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  logit_bias: z.record(z.string(), z.number().min(-100).max(100)).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
  n: z.literal(1, { error: "tollgate returns one choice per request: remove n or set it to 1" }).nullish(),
  // null, as some clients send an unset option, means unset (as OpenAI reads it).
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  // Not a fixed list: OpenAI adds levels ("none", "xhigh", "max" since "minimal"…"high"), and
  // which a model takes is the model's to say.
  reasoning_effort: z
    .string()
    .regex(/^[a-z]{1,16}$/, { error: 'write a reasoning effort the model takes, such as "low", "medium" or "high"' })
    .nullish(),
  response_format: responseFormat.nullish(),
  user: z.string().optional(),
  // OpenAI's successor to `user` for abuse monitoring: the end user, hashed by the app.
  safety_identifier: z.string().max(64, { error: "write at most 64 characters (OpenAI's limit): a hash of the end user's id" }).nullish(),
  // The app's own cache routing key: it knows which of its requests share a prefix.
  prompt_cache_key: z.string().nullish(),
  // How long OpenAI keeps the prompt's cached prefix ("in_memory", "24h"): OpenAI targets only.
  prompt_cache_retention: z
    .string()
    .regex(/^[a-z0-9_]{1,16}$/, { error: 'write a retention OpenAI takes, such as "in_memory" or "24h"' })
    .nullish(),
  // Explicit cache breakpoints (gpt-5.6 and later) would need each content part's
  // prompt_cache_breakpoint carried too (refused above); without them an explicit-mode request
  // caches nothing. Options that restate OpenAI's defaults (implicit mode, a 30-minute ttl) are accepted, and
  // need not be sent (older models do not know the field).
  prompt_cache_options: z
    .object({
      mode: z
        .literal("implicit", { error: "tollgate does not carry OpenAI's explicit prompt-cache breakpoints: remove prompt_cache_options (and prompt_cache_breakpoint), and OpenAI caches the prefix implicitly" })
        .optional(),
      ttl: z.literal("30m", { error: 'write "30m", the only ttl OpenAI takes, or leave it out' }).optional(),
    })
    .nullish(),
  // gpt-5's answer length ("low", "medium", "high"): fewer output tokens at "low". Not a fixed
  // list, as reasoning_effort is not.
  verbosity: z
    .string()
    .regex(/^[a-z]{1,16}$/, { error: 'write a verbosity the model takes: "low", "medium" or "high"' })
    .nullish(),
  // Flex and priority processing are billed at rates of their own, which tollgate's price list
  // does not have: a record priced at standard rates would not match the invoice.
  service_tier: z
    .enum(["auto", "default"], { error: 'tollgate prices answers at OpenAI\'s standard rates, and "flex", "scale" and "priority" are billed at others: remove service_tier, or write "auto" or "default"' })
    .nullish(),
  // Stored completions (OpenAI's evals and distillation read them), with the app's tags.
  store: z.boolean().nullish(),
  metadata: z
    .record(z.string(), z.string({ error: "write string values: OpenAI's metadata holds strings only" }))
    .nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20, { error: "at most 20 (OpenAI's limit)" }).nullish(),
  // Predicted Outputs: text the answer will largely repeat (a file being edited), for speed.
  prediction: z.object({ type: z.literal("content"), content: textContent }).nullish(),
  // Moderated completions answer with moderation results of their own, which tollgate's answer
  // would not carry: the app would read an unmoderated answer as a moderated one.
  moderation: z
    .null({ error: "tollgate does not carry OpenAI's moderated completions: remove moderation, and moderate with the moderations endpoint in your app" })
    .optional(),
  functions: z.undefined({ error: "legacy `functions` are not supported: send `tools` instead" }).optional(),
  function_call: z.undefined({ error: "legacy `function_call` is not supported: send `tools` and `tool_choice` instead" }).optional(),
  // An answer in audio cannot be carried: accepted and ignored, the app would look for
  // `message.audio` in a text answer and fail on it.
  modalities: z
    .array(z.literal("text", { error: 'tollgate carries text answers only: remove "audio" from modalities' }))
    .nullish(),
  audio: z.null({ error: "tollgate carries text answers only: remove audio (and modalities: [\"audio\"])" }).optional(),
  // OpenAI's built-in web search runs at OpenAI (search-preview models only): no other target
  // searches, and an answer without it would pass for a searched one.
  web_search_options: z.null({ error: "web search is OpenAI's own tool, which tollgate does not carry to other targets: remove web_search_options, or search in your app and send the results" }).optional(),
});

export type OpenAIChatRequest = z.infer<typeof openAIChatRequestSchema>;
